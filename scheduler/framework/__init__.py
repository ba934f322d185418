"""The scheduler framework's contracts: what a plugin sees and what it answers.

- `status`: the coded outcome of every plugin call (`None` means success, as Go's nil does);
- `cycle_state`: the scratchpad one scheduling attempt shares between its plugins;
- `resources`: resource vectors and a pod's effective requests;
- `node_info`: one node with the pods on it, as the snapshot holds it;
- `snapshot`: the consistent view one cycle runs on;
- `events`: cluster events and queueing hints;
- `interfaces`: one protocol per extension point, and the `Handle` plugins are built with.
"""
