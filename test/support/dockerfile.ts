/** One instruction of a Dockerfile, continuation lines joined, comments dropped. */
export interface Instruction {
  keyword: string;
  args: string;
  /** Index of the stage it belongs to (0-based), and that stage's name if it has one. */
  stage: number;
  stageName: string | undefined;
}

/** Enough of the Dockerfile grammar for the files this project writes: no heredocs, no escapes other than `\`. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let stage = -1;
  let stageName: string | undefined;
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    pending += `${pending ? ' ' : ''}${line.endsWith('\\') ? line.slice(0, -1).trim() : line}`;
    if (line.endsWith('\\')) continue;
    const [keyword = '', ...rest] = pending.split(/\s+/);
    const args = rest.join(' ');
    pending = '';
    if (keyword.toUpperCase() === 'FROM') {
      stage += 1;
      stageName = /\bAS\s+(\S+)/i.exec(args)?.[1];
    }
    instructions.push({ keyword: keyword.toUpperCase(), args, stage, stageName });
  }
  return instructions;
}

/** COPY's sources and destination, with `--from` when it copies out of another stage. */
export function copyOf(instruction: Instruction): { from: string | undefined; sources: string[]; destination: string } {
  const words = instruction.args.split(/\s+/);
  const flags = words.filter((word) => word.startsWith('--'));
  const paths = words.filter((word) => !word.startsWith('--'));
  const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
  return { from, sources: paths.slice(0, -1), destination: paths.at(-1)! };
}

/** The last stage: what the image is. */
export function finalStage(instructions: readonly Instruction[]): Instruction[] {
  const last = Math.max(...instructions.map((instruction) => instruction.stage));
  return instructions.filter((instruction) => instruction.stage === last);
}

/** What the final stage's ENTRYPOINT (exec form) hands to node: its options, and the script, as a path inside the image. */
export function entryCommand(instructions: readonly Instruction[]): { nodeArgs: string[]; script: string } {
  const entrypoint = finalStage(instructions).findLast((instruction) => instruction.keyword === 'ENTRYPOINT');
  const words = entrypoint ? (JSON.parse(entrypoint.args) as string[]) : [];
  const afterNode = words.slice(words.indexOf('node') + 1);
  const nodeArgs = afterNode.slice(0, afterNode.findIndex((word) => !word.startsWith('-')));
  const script = afterNode[nodeArgs.length];
  if (!words.includes('node') || !script) throw new Error(`no "node [options] <script>" in the ENTRYPOINT: ${entrypoint?.args}`);
  return { nodeArgs, script };
}

/** An ENV instruction's variables, values in double quotes taken whole (without the quotes). */
export function envOf(instruction: Instruction): Record<string, string> {
  return Object.fromEntries([...instruction.args.matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g)].map(([, key, quoted, plain]) => [key!, quoted ?? plain!]));
}
