package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The numbered rule list and the test methods of {@link StoreTck} match one to one. */
class RuleListTest {
    private static final Pattern ID = Pattern.compile("R[0-9][0-9]?\\.[1-9][0-9]?");

    @Test
    void everyRuleHasExactlyOneTestMethodNamedAfterIt() {
        Map<Rule, List<String>> methods = new EnumMap<>(Rule.class);
        for (Class<?> c : TckRunner.hierarchy(StoreTck.class)) {
            for (Method m : c.getDeclaredMethods()) {
                if (!m.isAnnotationPresent(Test.class)) {
                    continue;
                }
                Rule r = Rule.ofMethodName(m.getName()).orElseThrow(
                        () -> new AssertionError("test method " + m.getName() + " carries no rule id"));
                methods.computeIfAbsent(r, k -> new ArrayList<>()).add(m.getName());
                DisplayName dn = m.getAnnotation(DisplayName.class);
                assertTrue(dn != null && dn.value().startsWith(r.id() + " "),
                        m.getName() + " must have @DisplayName starting with \"" + r.id() + " \"");
            }
        }
        for (Rule r : Rule.values()) {
            assertEquals(1, methods.getOrDefault(r, List.of()).size(), "test methods of " + r.id() + ": "
                    + methods.get(r));
        }
    }

    @Test
    void theListHoldsTheRulesOfTckRulesPlusR01AndTheForcedStateRules() {
        // 51 rules of TCK-RULES.md, the TCK's own R0.1, R1.9 / R5.7 (forced states never expire), the
        // contract v2 store rules R1.10, R1.11, R2.10, R5.8 to R5.10, R6.9, R6.10 and the contract v2 engine
        // rules R7.8 to R7.10, the leaky strategy's R9.1 to R9.7, and R1.12, R4.10, R4.11, R5.11, R6.11, R6.12, R8.4
        // and R8.5 (contract v3: each catches a wrong store the rules before it pass), and for sliding windows, slow
        // calls and modes R7.11 to R7.13, R10.1 to R10.5, R11.1 to R11.4 and R12.1 to R12.7, and quorum opening
        // R13.1 to R13.6, batches of outcomes R14.1 and R14.2, and listing operations R15.1 to R15.4.
        assertEquals(115, Rule.values().length);
        for (Rule r : Rule.values()) {
            assertTrue(ID.matcher(r.id()).matches(), r.id());
            assertEquals(r.name().replace('_', '.'), r.id(), "constant name and id agree");
            assertTrue(!r.statement().isBlank() && !r.hint().isBlank(), r.id());
        }
        assertEquals(Rule.R0_1, Rule.values()[0]);
    }
}
