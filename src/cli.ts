#!/usr/bin/env node
import { Command } from 'commander';
import { startAgent } from './agent/agent.js';
import { agentEnvHelp, loadAgentConfig } from './agent/config.js';
import { runDev } from './dev/run-dev.js';
import { ConfigError, RedisServerMissingError } from './errors/index.js';
import { loadServiceConfig, serviceEnvHelp } from './service/config.js';
import { startService } from './service/service.js';
import { stopOnSignals } from './shutdown.js';
import { VERSION } from './version.js';

/** Known, explained failures print their message alone; anything else keeps its stack. */
function fail(error: unknown): never {
  if (error instanceof ConfigError || error instanceof RedisServerMissingError) {
    console.error(error.message);
    process.exit(error instanceof ConfigError ? 2 : 1);
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
      const service = await startService(loadServiceConfig());
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
      const agent = await startAgent(loadAgentConfig());
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
      `DATABASE_URL, PGLITE_DIR, BOOTSTRAP_ACCOUNT_ID, BOOTSTRAP_API_KEY, LOG_LEVEL (default WARN).\n`,
  )
  .action(async () => {
    try {
      const dev = await runDev(process.env, (line) => console.log(line));
      stopOnSignals(async () => {
        console.log('stopping…');
        await dev.stop();
      });
    } catch (error) {
      fail(error);
    }
  });

await program.parseAsync();
