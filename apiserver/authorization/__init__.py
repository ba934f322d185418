"""Authorization: who may do what, decided after authentication and before any handler runs.

`attributes` turns a request into what an authorizer judges; `rules` matches RBAC PolicyRules;
`rbac_index` keeps the stored Roles, ClusterRoles and their bindings decoded in memory;
`rbac` answers from them (kube's RBACAuthorizer and its rule resolver); `node` is the Node
authorizer for kubelets, over `node_graph` (what a node's pods reference); `chain` is the
`--authorization-mode` union with the system:masters shortcut; `escalation` is the
`escalate`/`bind` check on RBAC writes; `impersonation` turns Impersonate-* headers into a user;
`bootstrap_policy` holds and seeds upstream's default roles and bindings.
"""
