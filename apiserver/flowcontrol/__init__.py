"""API Priority and Fairness (kube-apiserver's flowcontrol), for haru's one-process API server.

- `defaults.py`: upstream's mandatory and suggested FlowSchemas and PriorityLevelConfigurations;
- `maintenance.py`: keeps them, digests the stored objects into the `Config`, writes Dangling;
- `config.py`: FlowSchemas in matching order, seats per level, `classify()`;
- `matching.py`: a FlowSchema rule against a request (subjects, resource and non-resource rules);
- `estimate.py`: seats per request (LIST and initial-events WATCH by object count);
- `queueset.py`: one level's seats, shuffle-sharded fair queues, refusals;
- `filter.py`: the middleware step (`app.priority_and_fairness`), the PF headers and the 429;
- `metrics.py`: `apiserver_flowcontrol_*` on /metrics.
`runner.start` builds it unless `--enable-priority-and-fairness=false`.
"""
