"""``python -m platform.manifests``: check every KubeRay manifest (see the package docstring)."""
import sys

from platform.manifests import main

sys.exit(main())
