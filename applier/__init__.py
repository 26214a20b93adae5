"""The on-node agent: fetch -> parse -> diff -> plan -> apply stages -> reboot -> verify."""
