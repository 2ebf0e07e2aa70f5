"""``python -m k8s.checker``: check every KubeRay manifest (see the package docstring)."""
import sys

from k8s.checker import main

sys.exit(main())
