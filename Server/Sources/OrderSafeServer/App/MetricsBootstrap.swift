import Metrics
import Prometheus

/// The process-wide Prometheus registry; bootstrapping swift-metrics happens exactly once, on first use.
public enum MetricsBootstrap {
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()
}
