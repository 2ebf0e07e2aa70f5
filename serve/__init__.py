"""Ray Serve application serving registered operating points (see ``serve.app``)."""
