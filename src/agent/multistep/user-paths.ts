/**
 * What a run says about its files (error messages, stack lines, steps, logs)
 * in the user's terms: `tests/login.spec.ts:12:5`, as in their project, not
 * the job directory's absolute path, which is the agent's business and means
 * nothing to whoever reads the result.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A function that takes the job directory's prefixes out of a text: files of
 * `check/` become their path in the user's project, the agent's own files
 * (`results/…`, `node_modules/…`) their path in the job directory. `file://`
 * URLs (ES module stacks) too. The directory's real path as well, where it
 * differs (a sandbox root below a symbolic link).
 */
export async function userPathRewriter(root: string): Promise<(text: string) => string> {
  const real = await realpath(root).catch(() => root);
  // The longer root first (one may end with the other); of each, a URL before its bare path, `…/check/` before `…/`.
  const roots = real === root ? [root] : [root, real].sort((a, b) => b.length - a.length);
  const prefixes = roots.flatMap((directory) =>
    [join(directory, 'check'), directory].flatMap((folder) => [`file://${folder}/`, `${folder}/`]),
  );
  return (text) => {
    let result = text;
    for (const prefix of prefixes) if (result.includes(prefix)) result = result.split(prefix).join('');
    return result;
  };
}
