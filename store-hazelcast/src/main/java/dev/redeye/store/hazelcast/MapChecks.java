package dev.redeye.store.hazelcast;

import com.hazelcast.cluster.Member;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MapConfig;
import com.hazelcast.core.EntryView;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.LocalMapStats;
import dev.redeye.api.StoreException;

/**
 * Refuses, when a store opens, map configurations under which the store cannot keep its promises, with the reason
 * and what to change:
 *
 * <ul>
 * <li>a <b>near cache</b> for the map on the instance the store uses: its reads would be served from a local copy
 * that lags behind the cluster (a breaker would not see another instance open it), and CAS mode would read a stale
 * value, lose its compare-and-set against the real one, read the same stale value again, and give up after
 * {@code casAttempts}. Seen on a member (its map configuration) and on a client (its map's near-cache
 * statistics);</li>
 * <li>a map that <b>expires or evicts entries by itself</b> (a time-to-live, a max-idle, an eviction policy):
 * forced states must never expire and a live trial claim must hold its permit until its own ttl. On a member the
 * map configuration says so; a client cannot read the members' configuration, so it writes one probe entry without
 * a ttl (under a key no operation name can have: it contains U+0000, which the engine refuses in names), reads the
 * ttl and max-idle the map gave it, and removes it. An eviction policy is invisible from a client: the module
 * README says not to configure one.</li>
 * <li>{@code read-backup-data} on a member: a read served by a backup replica may miss the latest write.</li>
 * </ul>
 */
final class MapChecks {
    /** The probe entry's key; no operation name contains U+0000. */
    static final String PROBE_KEY = "\u0000redeye-map-check";

    private MapChecks() {
    }

    /**
     * @throws IllegalArgumentException if the map is configured in a way the store cannot work with
     * @throws StoreException           if the cluster cannot be asked
     */
    static void refuseUnsafe(HazelcastInstance hz, IMap<String, Object> map) {
        String name = map.getName();
        boolean member = hz.getLocalEndpoint() instanceof Member;
        if (member) {
            MapConfig c = hz.getConfig().findMapConfig(name);
            if (c.getNearCacheConfig() != null) {
                throw nearCache(name, "this member's configuration");
            }
            if (c.getTimeToLiveSeconds() > 0 || c.getMaxIdleSeconds() > 0) {
                throw expires(name, "time-to-live-seconds=" + c.getTimeToLiveSeconds() + ", max-idle-seconds="
                        + c.getMaxIdleSeconds());
            }
            EvictionPolicy eviction = c.getEvictionConfig().getEvictionPolicy();
            if (eviction != EvictionPolicy.NONE) {
                throw new IllegalArgumentException("the Hazelcast map '" + name + "' is configured to evict entries"
                        + " (eviction policy " + eviction + "): an evicted entry would drop a forced state or a live"
                        + " trial claim, silently closing a breaker an operator holds open or admitting a second"
                        + " trial; configure the map without eviction (redeye sets each entry's own clean-up ttl)");
            }
            if (c.isReadBackupData()) {
                throw new IllegalArgumentException("the Hazelcast map '" + name + "' is configured with"
                        + " read-backup-data=true: a read served by a backup replica may miss the latest write (a"
                        + " breaker would not see another instance open it); configure the map with"
                        + " read-backup-data=false, Hazelcast's default");
            }
            return;
        }
        LocalMapStats stats = map.getLocalMapStats();
        if (stats != null && stats.getNearCacheStats() != null) {
            throw nearCache(name, "this client's configuration");
        }
        EntryView<String, Object> probe;
        try {
            map.set(PROBE_KEY, "redeye map check");
            probe = map.getEntryView(PROBE_KEY);
            map.delete(PROBE_KEY);
        } catch (RuntimeException e) {
            throw new StoreException("cannot check the configuration of the Hazelcast map '" + name + "': " + e, e);
        }
        if (probe != null && (probe.getTtl() != Long.MAX_VALUE || probe.getMaxIdle() != Long.MAX_VALUE)) {
            throw expires(name, "an entry written without a ttl was given ttl=" + probe.getTtl() + " ms, max-idle="
                    + probe.getMaxIdle() + " ms");
        }
    }

    private static IllegalArgumentException nearCache(String map, String where) {
        return new IllegalArgumentException("a near cache is configured for the Hazelcast map '" + map + "' in "
                + where + ": redeye refuses it, since reads from a near cache lag behind the cluster (a breaker would"
                + " not see other instances open or close it) and CAS mode would keep comparing against a stale value"
                + " until it gives up; remove the near-cache configuration for '" + map + "' (a wildcard"
                + " near-cache name can match it too)");
    }

    private static IllegalArgumentException expires(String map, String what) {
        return new IllegalArgumentException("the Hazelcast map '" + map + "' expires entries by itself (" + what
                + "): a forced state must never expire and a trial claim must live exactly its own ttl, so redeye"
                + " refuses a map time-to-live or max-idle; configure the map without them (redeye sets each entry's"
                + " own clean-up ttl)");
    }
}
