"""The on-node agent: converge a node to its pool's rendered config, rebooting only when the change needs it.

Flow (applier/agent.py): fetch (server or file) -> plan (fleet.diff, fleet.reconcile,
fleet.disruption: the same rules `mco diff` uses) -> apply (files.py, units.py, ssh.py: atomic writes,
originals backed up once) -> stage OS changes (backends/: ostree, rpm-ostree, bootc, none) -> reboot or
run the post-config actions -> verify (verify.py) -> report (report.py). drift.py watches for changes
made behind its back.

State lives in `<root>/etc/machine-config-daemon` (state.py): `currentconfig` is written only once the
disk matches it and `pending.json` before the disk is touched, so a node killed at any instant converges on
the next run. Layering: this package imports ignition/ and renderer's pure modules (rendered, diff,
disruption, reconcile) only, and talks to the server over HTTP.

Disruption policy: `--policy FILE` (a MachineConfiguration `cluster`), else the JSON in the rendered
config's `machineconfiguration.openshift.io/node-disruption-policy` annotation, else MCO's defaults.
"""
