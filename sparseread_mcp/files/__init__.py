"""Files under the roots: opening them once and safely, their lines, anchors, versions and caches."""
