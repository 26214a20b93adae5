"""The model every part of machine-config shares: rendered configs, pool records, node status, the store seam,
and the pure rules read from them (diff, disruption, reconcile, rollout).

The renderer writes this model, the server and image builder read it, the applier acts on it. It imports only
`ignition/`, so the applier can use the rules without the renderer's loading and templating.
"""
