"""custom.metrics.k8s.io/v1beta2 and external.metrics.k8s.io/v1beta1, served in-process as a metrics
adapter (prometheus-adapter, KEDA) would serve them behind an APIService, from values a test sets.

`source.py` reads the values (an annotation on the described object for custom metrics, the
`haru-metrics` ConfigMap for external ones); `serving.py` answers the GETs with upstream's
MetricValueList / ExternalMetricValueList and the adapters' 404 texts, and lists the metrics in
each group-version's discovery. `app.py` sends both groups' paths here.
"""
