package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pieces of the scale section that need no service: ports, socket counting, the section's arguments. */
class ScaleBenchTest {

    @Test
    void thePortOfEachStoreUriIsTheServers() {
        assertEquals(6380, ScaleBench.port("redis://127.0.0.1:6380?prefix=a%3A"));
        assertEquals(6379, ScaleBench.port("redis://127.0.0.1?prefix=a"));
        assertEquals(5433, ScaleBench.port("jdbc:postgresql://127.0.0.1:5433/postgres?user=postgres&schema=s"));
        assertEquals(5432, ScaleBench.port("jdbc:postgresql://localhost/postgres?user=postgres"));
        assertEquals(5702, ScaleBench.port("hazelcast://redeye-bench-x@127.0.0.1:5702?map=m&timeout=10000"));
        assertEquals(39479, ScaleBench.port(
                "dynamodb://bench:bench@t?region=us-east-1&createTable=true&endpoint=http://127.0.0.1:39479"));
        assertEquals(4567, ScaleBench.port("dynamodb://t?endpoint=http://127.0.0.1:4567&region=us-east-1"));
    }

    @Test
    void socketsToAPortAreCountedForTheProcessesHoldingThem() throws IOException {
        assumeTrue(Files.isReadable(Paths.get("/proc/net/tcp")), "needs Linux /proc");
        long me = ProcessHandle.current().pid();
        try (ServerSocket server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
            int port = server.getLocalPort();
            assertEquals(0, ScaleBench.ClientSockets.established(List.of(me), port));
            try (Socket a = new Socket(InetAddress.getLoopbackAddress(), port);
                    Socket b = new Socket(InetAddress.getLoopbackAddress(), port);
                    Socket acceptedA = server.accept();
                    Socket acceptedB = server.accept()) {
                // the accepted ends have the port as their local port, not their remote one: not counted
                assertEquals(2, ScaleBench.ClientSockets.established(List.of(me), port));
                assertEquals(0, ScaleBench.ClientSockets.established(List.of(), port));
            }
        }
    }

    @Test
    void postgresStagesNeedConnectionsPerInstanceWithAPoolEachAndPerNewJvmWithASharedOne() {
        assertEquals(35, ScaleBench.postgresConnectionsNeeded(0, 10, 0));
        assertEquals(275, ScaleBench.postgresConnectionsNeeded(0, 100, 10));
        // one pool of 4 per child JVM of 250 instances: only a stage that starts JVMs needs more
        assertEquals(9, ScaleBench.postgresConnectionsNeeded(4, 10, 0));
        assertEquals(5, ScaleBench.postgresConnectionsNeeded(4, 100, 10));
        assertEquals(9, ScaleBench.postgresConnectionsNeeded(4, 251, 100));
        assertEquals(17, ScaleBench.postgresConnectionsNeeded(4, 1000, 100));
        assertEquals(21, ScaleBench.postgresConnectionsNeeded(4, 1000, 0));
    }

    @Test
    void aParameterJoinsTheQueryOrStartsIt() {
        assertEquals("jdbc:postgresql://h/db?user=u&ApplicationName=a",
                ScaleBench.withParameter("jdbc:postgresql://h/db?user=u", "ApplicationName=a"));
        assertEquals("jdbc:postgresql://h/db?ApplicationName=a",
                ScaleBench.withParameter("jdbc:postgresql://h/db", "ApplicationName=a"));
    }

    @Test
    void fleetSizesAreParsedAndCheckedAndTheSectionRunsOnlyWhenNamed() {
        assertEquals(List.of(10, 100, 1000), ScaleBench.sizes("10, 100,1000"));
        assertThrows(IllegalArgumentException.class, () -> ScaleBench.sizes("10,0"));
        assertFalse(BenchEnv.parse(new String[0]).runs("scale"), "a run without --sections leaves scale out");
        assertTrue(BenchEnv.parse(new String[] {"--sections", "scale"}).runs("scale"));
        assertThrows(IllegalArgumentException.class, () -> BenchEnv.parse(new String[] {"--sections", "scales"}));
    }
}
