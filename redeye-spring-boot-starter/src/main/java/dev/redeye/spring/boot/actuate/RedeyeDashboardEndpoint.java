package dev.redeye.spring.boot.actuate;

import dev.redeye.dashboard.FleetView;
import dev.redeye.dashboard.Tile;
import java.util.List;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The Actuator endpoint {@code redeyedashboard}: the fleet as the application's store holds it
 * ({@link FleetView}), as JSON at {@code GET /actuator/redeyedashboard}; with it, under the same path and so under
 * the same protection, the live page ({@code /actuator/redeyedashboard/}), its event stream and
 * {@code /actuator/redeyedashboard/hystrix.stream} ({@link RedeyeDashboardController}). Opt-in: created only when
 * exposed ({@code management.endpoints.web.exposure.include=redeyedashboard}). The application's security (Spring
 * Security's rules for Actuator endpoints, for example {@code EndpointRequest.to("redeyedashboard")}) protects
 * it; it has no authentication of its own.
 */
@Endpoint(id = RedeyeDashboardEndpoint.ID)
public class RedeyeDashboardEndpoint {
    /** The endpoint's id, and the last segment of its path. */
    public static final String ID = "redeyedashboard";

    private final FleetView view;

    /** An endpoint over {@code view}. */
    public RedeyeDashboardEndpoint(FleetView view) {
        this.view = Objects.requireNonNull(view, "view");
    }

    /** Every operation's tile, the last hour's transitions and the store's status. */
    @ReadOperation
    public Snapshot snapshot() {
        return new Snapshot(view.tiles(), view.timeline(), view.storeStatus());
    }

    /**
     * The endpoint's answer.
     *
     * @param tiles    every operation, sorted by name
     * @param timeline the last hour's transitions, oldest first
     * @param store    whether the store answered its last read
     */
    public record Snapshot(List<Tile> tiles, List<FleetView.TimelineEntry> timeline, FleetView.StoreStatus store)
            implements OperationResponseBody {
    }
}
