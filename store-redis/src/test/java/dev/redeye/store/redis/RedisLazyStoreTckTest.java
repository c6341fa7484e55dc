package dev.redeye.store.redis;

import dev.redeye.Stores;
import dev.redeye.spi.Store;

/**
 * The full TCK over clients of {@code Stores.open(uri)} in its default, lazy mode: a store that connects on
 * first use must keep every rule of the store it connects to (the hooks reach that store once connected).
 */
class RedisLazyStoreTckTest extends RedisStoreTckTest {

    @Override
    protected Store newClient() {
        String url = RedisTestSupport.url();
        return Stores.open(url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix());
    }
}
