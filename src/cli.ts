#!/usr/bin/env node
import { Command } from 'commander';
import { agentEnvHelp, loadAgentConfig } from './agent/config.js';
import {
  ConfigError,
  DatabaseConnectionLostError,
  DatabaseRefusedError,
  DatabaseUnavailableError,
  PortInUseError,
  RedisServerMissingError,
  RuntimeInstallError,
  RuntimeNotInstallableError,
  UnknownRuntimeError,
} from './errors/index.js';
import { loadServiceConfig, serviceEnvHelp } from './service/config.js';
import { stopOnSignals } from './shutdown.js';
import { VERSION } from './version.js';

// Each command loads only its own half: the agent must not carry the service's
// web framework and embedded PostgreSQL in its memory.

/**
 * Known, explained failures print their message alone; anything else keeps its
 * stack. Exit code 2: what was asked for is wrong (configuration, runtime ids);
 * 1: it was right but could not be done.
 */
function fail(error: unknown): never {
  const wrongInput =
    error instanceof ConfigError || error instanceof UnknownRuntimeError || error instanceof RuntimeNotInstallableError;
  const explained =
    error instanceof RedisServerMissingError ||
    error instanceof RuntimeInstallError ||
    // The service's start: a port taken, a database that never answered.
    error instanceof PortInUseError ||
    error instanceof DatabaseUnavailableError ||
    error instanceof DatabaseRefusedError ||
    error instanceof DatabaseConnectionLostError;
  if (wrongInput || explained) {
    console.error(error.message);
    process.exit(wrongInput ? 2 : 1);
  }
  console.error(error);
  process.exit(1);
}

const program = new Command('outpost')
  .version(VERSION)
  .description('Private location agent for synthetic monitoring, and the monitoring service it works for.');

program
  .command('service')
  .description('Run the monitoring service (HTTP API, scheduler, agent protocol).')
  .addHelpText('after', `\nEnvironment variables:\n${serviceEnvHelp()}\n`)
  .action(async () => {
    try {
      const config = loadServiceConfig();
      const { startService } = await import('./service/service.js');
      const service = await startService(config);
      stopOnSignals(() => service.close());
    } catch (error) {
      fail(error);
    }
  });

program
  .command('agent')
  .description('Run the private location agent: claim jobs from the service and run them.')
  .addHelpText('after', `\nEnvironment variables:\n${agentEnvHelp()}\n`)
  .action(async () => {
    try {
      const config = loadAgentConfig();
      const { tuneV8ForLongRunningAgent } = await import('./agent/v8-tuning.js');
      tuneV8ForLongRunningAgent();
      const { startAgent } = await import('./agent/agent.js');
      const { createAgentLogging, reportCrashes } = await import('./agent/error-reporting/agent-logging.js');
      const logging = createAgentLogging(config, process.env);
      reportCrashes(logging);
      const agent = await startAgent(config, { logger: logging.logger, errorReporter: logging.errors });
      stopOnSignals(() => agent.stop());
    } catch (error) {
      fail(error);
    }
  });

program
  .command('dev')
  .description('Run service, agent and a demo site together on embedded defaults (what npm start runs).')
  .addHelpText(
    'after',
    `\nEnvironment variables: PORT (default 3000, any free port when taken), AGENT_HEALTH_PORT, REDIS_URL,\n` +
      `DATABASE_URL, PGLITE_DIR, BOOTSTRAP_ACCOUNT_ID, BOOTSTRAP_API_KEY, LOG_LEVEL (default WARN),\n` +
      `EXTERNAL_OBSERVABILITY (off: the agent reports no error events to the service).\n`,
  )
  .action(async () => {
    try {
      const { runDev } = await import('./dev/run-dev.js');
      const dev = await runDev(process.env, (line) => console.log(line));
      stopOnSignals(async () => {
        console.log('stopping…');
        await dev.stop();
      });
    } catch (error) {
      fail(error);
    }
  });

const runtimes = program
  .command('runtimes')
  .description('Install and list the pinned runtimes (Node.js and npm packages) that script checks run on.');

runtimes
  .command('install')
  .description(
    'Install runtimes into runtimes/<id>/node_modules with npm ci (HTTPS_PROXY and npm configuration apply). ' +
      'Without ids: 2026.04 and 2025.04. Runtimes already installed from the same lockfile are skipped.',
  )
  .argument('[ids...]', 'runtime ids, e.g. 2026.04')
  .option('--all', 'install every installable runtime')
  .option('--force', 'run npm ci even where the runtime is already installed')
  .action(async (ids: string[], options: { all?: boolean; force?: boolean }) => {
    try {
      const { installRuntimes } = await import('./runtimes/install.js');
      await installRuntimes(ids, { all: options.all, force: options.force, progress: process.stdout });
    } catch (error) {
      fail(error);
    }
  });

runtimes
  .command('list')
  .description('List every runtime record and whether it is installed here.')
  .action(async () => {
    try {
      const { runtimeCatalog } = await import('./runtimes/catalog.js');
      const { installedRuntimes } = await import('./runtimes/installed.js');
      const { runtimeTable } = await import('./runtimes/runtime-table.js');
      const installed = new Set(installedRuntimes().map((runtime) => runtime.name));
      console.log(runtimeTable(runtimeCatalog(), installed));
    } catch (error) {
      fail(error);
    }
  });

await program.parseAsync();
