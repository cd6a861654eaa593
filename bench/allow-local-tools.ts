// Imported first by benchmarks whose agents call a tool served on this machine: the configuration
// is read once, at the first import of shared/config.ts, so this must come before it.
process.env.TOOL_ALLOWED_HOSTS ??= 'localhost';
