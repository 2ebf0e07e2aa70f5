"""putlab's KubeRay manifests (YAML, one per scenario) and ``k8s.checker``, the tool that validates them."""
