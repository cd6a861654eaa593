// Imported first by benchmarks whose agents call a tool served on this machine, or read a
// PostgreSQL source on it (127.0.0.1: connections go through the same outbound guard): the
// configuration is read once, at the first import of shared/config.ts, so this must come before it.
process.env.TOOL_ALLOWED_HOSTS ??= 'localhost,127.0.0.1';
