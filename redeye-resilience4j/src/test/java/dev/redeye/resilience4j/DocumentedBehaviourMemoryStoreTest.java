package dev.redeye.resilience4j;

/** {@link DocumentedBehaviourContract} over a shared in-process store ({@code memory://NAME}), fresh per test. */
class DocumentedBehaviourMemoryStoreTest extends DocumentedBehaviourContract {
    private final TestStores.Location store = TestStores.fresh(TestStores.Kind.MEMORY);

    @Override
    Resilience4jBreakers.Builder factory() {
        return Resilience4jBreakers.builder().store(store.open());
    }
}
