package dev.redeye.resilience4j;

/**
 * {@link DocumentedBehaviourContract} over the build's Redis ({@code REDEYE_REDIS_URL}), under a fresh key prefix
 * per test, deleted afterwards.
 */
class DocumentedBehaviourRedisTest extends DocumentedBehaviourContract {
    private final TestStores.Location store = TestStores.fresh(TestStores.Kind.REDIS);

    @Override
    Resilience4jBreakers.Builder factory() {
        return Resilience4jBreakers.builder().store(store.open());
    }

    @Override
    void cleanUp() {
        store.cleanUp();
    }
}
