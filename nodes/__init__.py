"""haru's hollow nodes: kubelets on simulated machines, their virtual devices, and the shell exec reaches."""
