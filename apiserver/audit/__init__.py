"""The audit log, as kube-apiserver's: a policy (audit.k8s.io/v1 Policy) decides per request how
much is recorded, and events (audit.k8s.io/v1 Event, one JSON line each) go to a file or stdout.

- `policy.py`: loading and validating `--audit-policy-file`, and the first-matching-rule lookup;
- `event.py`: the Event document (field order, timestamps, objectRef, responseStatus);
- `log_file.py`: the `--audit-log-path` writer with lumberjack-style rotation (maxsize, maxbackup,
  maxage);
- `recorder.py`: the request filter `app.py` installs after authentication (the stages, the
  request and response objects, the authorization annotations) and the `Audit-Id` header.
"""
