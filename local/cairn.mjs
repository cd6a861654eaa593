#!/usr/bin/env node
// `npx cairn …`: the CLI is TypeScript like the rest of Cairn; tsx (a dependency) runs it as is.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('./cairn-cli.ts');
process.exitCode = await runCli(process.argv.slice(2), process.env, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
