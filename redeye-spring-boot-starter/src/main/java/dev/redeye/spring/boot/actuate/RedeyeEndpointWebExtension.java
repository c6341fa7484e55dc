package dev.redeye.spring.boot.actuate;

import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.util.List;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.lang.Nullable;

/**
 * The {@code redeye} endpoint over HTTP: the same operations as {@link RedeyeEndpoint}, with errors that say why.
 * Actuator answers an endpoint's {@link InvalidEndpointRequestException} with a bare 400 whose body carries no
 * reason (Boot hides error messages by default), and a null result with an empty 404; this extension answers
 * both with an {@link ErrorDescriptor} instead:
 *
 * <ul>
 * <li>{@code GET /actuator/redeye/{breaker}/{operation}}: 404 naming the breakers there are, for an unknown
 * breaker; 404 saying the operation is unknown (not held here, no state stored) for an unknown operation;</li>
 * <li>{@code POST /actuator/redeye/{breaker}/{operation}}: 400 for an unknown breaker (naming the breakers), a
 * missing action or an unknown one (naming the known actions, also as {@code actions}).</li>
 * </ul>
 *
 * Thread-safe; holds no state of its own.
 */
@EndpointWebExtension(endpoint = RedeyeEndpoint.class)
public class RedeyeEndpointWebExtension {
    private final RedeyeEndpoint endpoint;
    private final RedeyeCircuitBreakers breakers;

    /**
     * @param endpoint the endpoint whose operations this extension serves over HTTP
     * @param breakers the application's breakers, to say which one is unknown
     */
    public RedeyeEndpointWebExtension(RedeyeEndpoint endpoint, RedeyeCircuitBreakers breakers) {
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        this.breakers = Objects.requireNonNull(breakers, "breakers");
    }

    /** {@link RedeyeEndpoint#operation}, or a 404 that names what is unknown. */
    @ReadOperation
    public WebEndpointResponse<Object> operation(@Selector String breaker, @Selector String operation) {
        RedeyeEndpoint.OperationDescriptor d = endpoint.operation(breaker, operation);
        if (d != null) {
            return new WebEndpointResponse<>(d);
        }
        String message = breakers.find(breaker).isEmpty() ? RedeyeEndpoint.unknownBreaker(breakers, breaker)
                : "unknown operation '" + operation + "' of breaker '" + breaker + "': this instance does not hold it "
                        + "and the store has no state for it";
        return error(WebEndpointResponse.STATUS_NOT_FOUND, breakers.find(breaker).isEmpty() ? "unknown breaker"
                : "unknown operation", message, null);
    }

    /** {@link RedeyeEndpoint#change}, or a 400 that says why; {@code action} may be missing (a 400 too). */
    @WriteOperation
    public WebEndpointResponse<Object> change(@Selector String breaker, @Selector String operation,
            @Nullable String action, @Nullable String mode) {
        try {
            return new WebEndpointResponse<>(endpoint.change(breaker, operation, action, mode));
        } catch (InvalidEndpointRequestException e) {
            boolean aboutAction = breakers.find(breaker).isPresent();
            return error(WebEndpointResponse.STATUS_BAD_REQUEST, e.getReason(), e.getMessage(),
                    aboutAction ? RedeyeEndpoint.ACTIONS : null);
        }
    }

    private static WebEndpointResponse<Object> error(int status, String error, String message, List<String> actions) {
        return new WebEndpointResponse<>(new ErrorDescriptor(status, error, message, actions), status);
    }

    /**
     * The body of an error: the HTTP status, a short reason ({@code unknown action}), a message that says what
     * was wrong and what there is, and for an action error the known actions.
     */
    public record ErrorDescriptor(int status, String error, String message, List<String> actions) {
    }
}
