"""Manifests -> model -> select -> order -> merge -> validate -> name -> store.

Imports ignition/ only."""
