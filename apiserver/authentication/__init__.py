"""Authentication as kube-apiserver does it: who sent a request, or that nobody we know did.

`chain.Authenticator` tries, in upstream's order, the TLS client certificate (`x509_users`), then the
bearer token: the kubeconfig's admin token, a `--token-auth-file` entry (`token_file`), a
service-account JWT (`service_account_tokens`, signed with `signing_key`). `oidc_discovery` serves
the issuer's documents so others can verify those tokens. The answer is an `auth.User`, which
authorization (RBAC) and admission read; `app.authenticate` turns "nobody" into 401 or anonymous.
"""
