package dev.redeye.resilience4j;

/** {@link DocumentedBehaviourContract} in local mode: the breaker's state in this process only. */
class DocumentedBehaviourLocalTest extends DocumentedBehaviourContract {
    @Override
    Resilience4jBreakers.Builder factory() {
        return Resilience4jBreakers.builder();
    }
}
