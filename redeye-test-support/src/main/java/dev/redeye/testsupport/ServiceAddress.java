package dev.redeye.testsupport;

import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Where a store module's tests find their backend: the address in an environment variable if it is set; else a
 * Testcontainers container of an image, started once per test JVM, where a Docker engine runs; else the test
 * fails with a message saying how to provide one. Never a mock, never a silent skip.
 *
 * <pre>{@code
 * static final ServiceAddress REDIS = ServiceAddress.of("REDEYE_REDIS_URL", "redis:7.2-alpine", 6379,
 *         "redis://%s:%d", "start one with 'redis-server --daemonize yes' and export REDEYE_REDIS_URL");
 * String url = REDIS.url();
 * }</pre>
 */
public final class ServiceAddress {
    private final String envVar;
    private final String image;
    private final int port;
    private final String urlFormat;
    private final String howTo;
    private final Consumer<GenericContainer<?>> setUp;
    private final UnaryOperator<String> env;
    private final BooleanSupplier docker;
    private String url;
    private GenericContainer<?> container;

    private ServiceAddress(String envVar, String image, int port, String urlFormat, String howTo,
            Consumer<GenericContainer<?>> setUp, UnaryOperator<String> env, BooleanSupplier docker) {
        this.envVar = Objects.requireNonNull(envVar, "envVar");
        this.image = Objects.requireNonNull(image, "image");
        this.port = port;
        this.urlFormat = Objects.requireNonNull(urlFormat, "urlFormat");
        this.howTo = Objects.requireNonNull(howTo, "howTo");
        this.setUp = Objects.requireNonNull(setUp, "setUp");
        this.env = env;
        this.docker = docker;
    }

    /**
     * The address of one backend.
     *
     * @param envVar    the environment variable that holds the address, used as it is (trimmed)
     * @param image     the Docker image of the container started when the variable is not set
     * @param port      the port the container serves on, exposed and mapped
     * @param urlFormat the address of the container, a {@link String#format} pattern taking its host ({@code %s})
     *                  and its mapped port ({@code %d}), for example {@code "redis://%s:%d"}
     * @param howTo     how to provide the backend without Docker, for the failure message
     */
    public static ServiceAddress of(String envVar, String image, int port, String urlFormat, String howTo) {
        return new ServiceAddress(envVar, image, port, urlFormat, howTo, c -> { }, System::getenv,
                ServiceAddress::dockerRuns);
    }

    /** This address with {@code setUp} applied to the container before it starts (environment, command, wait). */
    public ServiceAddress withContainer(Consumer<GenericContainer<?>> setUp) {
        return new ServiceAddress(envVar, image, port, urlFormat, howTo, this.setUp.andThen(setUp), env, docker);
    }

    /** This address reading the environment through {@code env} and asking {@code docker} whether Docker runs. */
    ServiceAddress withProbes(UnaryOperator<String> env, BooleanSupplier docker) {
        return new ServiceAddress(envVar, image, port, urlFormat, howTo, setUp, env, docker);
    }

    /** The environment variable that holds the address. */
    public String envVar() {
        return envVar;
    }

    /** Whether {@link #url()} can give an address: the variable is set or a Docker engine runs. */
    public boolean available() {
        return configured() != null || docker.getAsBoolean();
    }

    /**
     * The backend's address: the environment variable's value, else that of a container started on the first
     * call (it lives as long as the test JVM; Testcontainers removes it).
     *
     * @throws IllegalStateException when the variable is not set and no Docker engine runs, saying how to
     *                               provide the backend
     */
    public synchronized String url() {
        if (url != null) {
            return url;
        }
        String configured = configured();
        if (configured != null) {
            url = configured;
            return url;
        }
        if (!docker.getAsBoolean()) {
            throw new IllegalStateException("Neither " + envVar + " is set nor does a Docker engine run for "
                    + "Testcontainers to start " + image + ": " + howTo);
        }
        @SuppressWarnings("resource") // lives as long as the test JVM; Testcontainers removes it
        GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(image)).withExposedPorts(port);
        setUp.accept(c);
        c.start();
        container = c;
        url = String.format(urlFormat, c.getHost(), c.getMappedPort(port));
        return url;
    }

    private String configured() {
        String value = env.apply(envVar);
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static boolean dockerRuns() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return "ServiceAddress[" + envVar + ", else " + image + (container != null ? ", started" : "") + "]";
    }
}
