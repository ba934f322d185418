"""metrics.k8s.io/v1beta1, served in-process as metrics-server would serve it behind an APIService.

`resources.py` holds the two registry rows (NodeMetrics, PodMetrics: get and list, never stored);
`scraping.py` reads one kubelet's `/metrics/resource`; `points.py` keeps the last two points of
every node and container and turns cumulative CPU into a rate over a window, as metrics-server's
storage does; `collector.py` scrapes the Ready nodes when a request finds the points stale;
`serving.py` answers the GET and LIST requests `app.py` sends here.
"""
