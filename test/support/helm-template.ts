/**
 * Renders a Helm chart without Helm: the part of Go's text/template and of
 * Helm's functions that charts/outpost-agent uses, and nothing more. Anything
 * outside that part is an error rather than a guess, so a chart that drifts
 * beyond it fails its tests instead of passing them by accident.
 *
 * Kept close to Helm where charts usually go wrong:
 * - numbers from values are float64 in Helm, numbers written in a template or
 *   made by `int` are int; `eq`/`lt`/… refuse to compare the two, `printf "%d"`
 *   refuses a float64, and a float64 prints as Go prints it (1000000 → 1e+06).
 *   Here a float64 is a JS number and an int is a bigint.
 * - a field of a missing value is an error (`nil pointer evaluating …`), a
 *   missing key of a map is nil, and nil prints as nothing.
 * - `and`/`or` stop at the first argument that decides them.
 * - the rendered manifests are parsed as YAML 1.1, as Kubernetes reads them, so
 *   an unquoted `off` is a boolean here too.
 * Stricter than Helm: printing a map or list, printf with the wrong number of
 * arguments or a verb that does not fit its argument throw (Helm would print
 * something like `%!s(float64=1)` into the manifest).
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse, parseDocument, stringify } from 'yaml';

/** What `fail` and `required` raise: the message the chart wrote, as Helm prints it. */
export class TemplateFailure extends Error {}

/** A chart on disk: Chart.yaml, the default values, and every file under templates/. */
export interface Chart {
  metadata: Record<string, unknown>;
  values: Record<string, unknown>;
  /** Path under the chart directory (`templates/deployment.yaml`) → source. */
  templates: Map<string, string>;
}

export interface Release {
  name: string;
  namespace: string;
}

export interface Manifest {
  /** The template it came from, e.g. `templates/deployment.yaml`. */
  source: string;
  object: Record<string, any>;
}

export interface Rendered {
  manifests: Manifest[];
  notes: string;
  /** Every `.Values` path a lookup went through while rendering, e.g. `image.tag`. */
  valuesRead: Set<string>;
}

export function loadChart(directory: string): Chart {
  const templates = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else templates.set(relative(directory, path).split('\\').join('/'), readFileSync(path, 'utf8'));
    }
  };
  walk(join(directory, 'templates'));
  return {
    metadata: parse(readFileSync(join(directory, 'Chart.yaml'), 'utf8')),
    values: parse(readFileSync(join(directory, 'values.yaml'), 'utf8')),
    templates,
  };
}

/** Helm's coalescing of values: maps merge key by key, anything else replaces, null deletes. */
export function mergeValues(base: unknown, override: unknown): unknown {
  if (!isMap(base) || !isMap(override)) return structuredClone(override);
  const merged: Record<string, unknown> = structuredClone(base);
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete merged[key];
    else merged[key] = key in merged ? mergeValues(merged[key], value) : structuredClone(value);
  }
  return merged;
}

export function renderChart(chart: Chart, overrides: Record<string, unknown> = {}, release: Release = { name: 'outpost', namespace: 'monitoring' }): Rendered {
  const chartName = String(chart.metadata.name);
  const renderer = new Renderer();
  const files = [...chart.templates].map(([path, source]) => {
    const name = `${chartName}/${path}`;
    renderer.addFile(name, source);
    return { path, name };
  });
  const values = mergeValues(chart.values, overrides) as Record<string, unknown>;
  renderer.valuesPaths.set(values, '');
  const context = (templateName: string) =>
    new Struct('.', {
      Values: values,
      Release: new Struct('.Release', { Name: release.name, Namespace: release.namespace, Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1n }),
      Chart: new Struct('.Chart', { Name: chartName, Version: chart.metadata.version, AppVersion: chart.metadata.appVersion, Type: chart.metadata.type }),
      Template: new Struct('.Template', { Name: templateName, BasePath: `${chartName}/templates` }),
    });

  const manifests: Manifest[] = [];
  let notes = '';
  for (const { path, name } of files) {
    const base = path.split('/').pop()!;
    if (base.startsWith('_')) continue;
    const output = renderer.execute(name, context(name));
    if (base === 'NOTES.txt') {
      notes = output;
      continue;
    }
    for (const text of output.split(/^---\s*$/m)) {
      if (text.trim() === '') continue;
      // YAML 1.1 and unique keys: how Kubernetes' YAML reader sees the manifest.
      const document = parseDocument(text, { version: '1.1', uniqueKeys: true });
      const problems = [...document.errors, ...document.warnings];
      if (problems.length > 0) throw new Error(`${path} does not render to valid YAML: ${problems[0]!.message}\n${text}`);
      const object: unknown = document.toJS();
      if (object === null) continue;
      if (!isMap(object)) throw new Error(`${path} renders a document that is not a mapping:\n${text}`);
      manifests.push({ source: path, object });
    }
  }
  return { manifests, notes, valuesRead: renderer.valuesRead };
}

/** Every `.Values.a.b` written in an action of a template, as `a.b`: what a reader of the chart sees it use. */
export function valuesReferences(source: string): string[] {
  const paths: string[] = [];
  for (const item of lex(source, 'scan')) {
    if (item.kind !== 'action') continue;
    for (const match of item.text.matchAll(/(?<![\w)])\$?\.Values((?:\.[A-Za-z_]\w*)+)/g)) paths.push(match[1]!.slice(1));
  }
  return paths;
}

/* ----------------------------------------------------------------------------------------------
 * Lexing: text and actions, with Go's trim markers `{{- ` and ` -}}` applied, comments dropped.
 * -------------------------------------------------------------------------------------------- */

interface Item {
  kind: 'text' | 'action';
  text: string;
  /** "file:line" of the action, for messages. */
  where: string;
}

function lex(source: string, file: string): Item[] {
  const items: Item[] = [];
  let position = 0;
  let trimNext = false;
  const lineAt = (offset: number) => source.slice(0, offset).split('\n').length;
  while (position < source.length) {
    const open = source.indexOf('{{', position);
    let text = source.slice(position, open < 0 ? source.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (open < 0) {
      if (text) items.push({ kind: 'text', text, where: file });
      break;
    }
    let start = open + 2;
    if (/^-\s/.test(source.slice(start, start + 2))) {
      text = text.replace(/\s+$/, '');
      start += 1;
    }
    if (text) items.push({ kind: 'text', text, where: file });
    const close = findClose(source, start, `${file}:${lineAt(open)}`);
    let body = source.slice(start, close);
    trimNext = /\s-$/.test(body);
    if (trimNext) body = body.slice(0, -1);
    body = body.trim();
    if (!(body.startsWith('/*') && body.endsWith('*/'))) items.push({ kind: 'action', text: body, where: `${file}:${lineAt(open)}` });
    position = close + 2;
  }
  return items;
}

/** The `}}` that ends an action, skipping strings and comments, which may hold braces. */
function findClose(source: string, from: number, where: string): number {
  let index = from;
  while (index < source.length) {
    const char = source[index]!;
    if (char === '"') {
      index += 1;
      while (index < source.length && source[index] !== '"') index += source[index] === '\\' ? 2 : 1;
    } else if (char === '`') {
      index = source.indexOf('`', index + 1);
      if (index < 0) break;
    } else if (source.startsWith('/*', index)) {
      index = source.indexOf('*/', index + 2);
      if (index < 0) break;
      index += 1;
    } else if (source.startsWith('}}', index)) {
      return index;
    }
    index += 1;
  }
  throw new Error(`${where}: action not closed`);
}

/* ----------------------------------------------------------------------------------------------
 * Parsing actions: pipelines of commands, and the control structures that hold lists of nodes.
 * -------------------------------------------------------------------------------------------- */

type Token =
  | { t: 'str'; v: string }
  | { t: 'num'; v: number | bigint }
  | { t: 'lit'; v: boolean | null }
  | { t: 'field'; path: string[] }
  | { t: 'var'; name: string; path: string[] }
  | { t: 'ident'; v: string }
  | { t: '(' | ')' | '|' | ':=' | '=' | ',' };

type Operand =
  | { kind: 'const'; value: unknown }
  | { kind: 'field'; path: string[] }
  | { kind: 'var'; name: string; path: string[] }
  | { kind: 'func'; name: string }
  | { kind: 'pipe'; pipe: Pipeline };

interface Pipeline {
  declare: string[];
  /** `=` assigns to variables declared before; `:=` declares them. */
  assign: boolean;
  commands: Operand[][];
  where: string;
}

interface Block {
  type: 'if' | 'with' | 'range';
  pipe: Pipeline;
  then: Node[];
  otherwise: Node[];
}

type Node = { type: 'text'; text: string } | { type: 'output'; pipe: Pipeline } | Block;

function tokenize(text: string, where: string): Token[] {
  const tokens: Token[] = [];
  let rest = text;
  while (rest.trim() !== '') {
    const spaced = rest !== rest.trimStart();
    rest = rest.trimStart();
    let match: RegExpExecArray | null;
    if (rest.startsWith('"')) {
      match = /^"(?:[^"\\]|\\.)*"/.exec(rest);
      if (!match) throw new Error(`${where}: unterminated string`);
      tokens.push({ t: 'str', v: JSON.parse(match[0]) as string });
    } else if (rest.startsWith('`')) {
      match = /^`[^`]*`/.exec(rest);
      if (!match) throw new Error(`${where}: unterminated raw string`);
      tokens.push({ t: 'str', v: match[0].slice(1, -1) });
    } else if ((match = /^-?\d+(\.\d+)?(?![\w.])/.exec(rest))) {
      tokens.push({ t: 'num', v: match[1] ? Number(match[0]) : BigInt(match[0]) });
    } else if ((match = /^\$(\w*)((?:\.[A-Za-z_]\w*)*)/.exec(rest))) {
      tokens.push({ t: 'var', name: `$${match[1]}`, path: match[2] ? match[2].slice(1).split('.') : [] });
    } else if ((match = /^(?:\.[A-Za-z_]\w*)+/.exec(rest))) {
      tokens.push({ t: 'field', path: match[0].slice(1).split('.') });
    } else if ((match = /^\.(?![\w.])/.exec(rest))) {
      tokens.push({ t: 'field', path: [] });
    } else if ((match = /^[A-Za-z_]\w*/.exec(rest))) {
      const word = match[0];
      if (word === 'true' || word === 'false') tokens.push({ t: 'lit', v: word === 'true' });
      else if (word === 'nil') tokens.push({ t: 'lit', v: null });
      else tokens.push({ t: 'ident', v: word });
    } else if ((match = /^(:=|[()|=,])/.exec(rest))) {
      tokens.push({ t: match[0] as '(' | ')' | '|' | ':=' | '=' | ',' });
    } else {
      throw new Error(`${where}: cannot read "${rest.slice(0, 20)}"`);
    }
    // A field straight after `)` is `(x).field`, which this renderer does not do.
    if (!spaced && tokens.at(-2)?.t === ')' && tokens.at(-1)?.t === 'field') throw new Error(`${where}: (…).field is not supported`);
    rest = rest.slice(match[0].length);
  }
  return tokens;
}

function parsePipeline(tokens: Token[], where: string, allowDeclare: boolean): Pipeline {
  let index = 0;
  const declare: string[] = [];
  let assign = false;
  const declaration = tokens.findIndex((token) => token.t === ':=' || token.t === '=');
  if (declaration > 0 && tokens.slice(0, declaration).every((token, i) => (i % 2 === 0 ? token.t === 'var' && token.path.length === 0 : token.t === ','))) {
    if (!allowDeclare) throw new Error(`${where}: a variable cannot be declared here`);
    for (let i = 0; i < declaration; i += 2) declare.push((tokens[i] as { name: string }).name);
    assign = tokens[declaration]!.t === '=';
    index = declaration + 1;
  }
  const commands: Operand[][] = [[]];
  const parseOperand = (): Operand => {
    const token = tokens[index++]!;
    switch (token.t) {
      case 'str':
      case 'num':
      case 'lit':
        return { kind: 'const', value: token.v };
      case 'field':
        return { kind: 'field', path: token.path };
      case 'var':
        return { kind: 'var', name: token.name, path: token.path };
      case 'ident':
        return { kind: 'func', name: token.v };
      case '(': {
        let depth = 1;
        const start = index;
        while (index < tokens.length && depth > 0) {
          const t = tokens[index++]!.t;
          if (t === '(') depth += 1;
          if (t === ')') depth -= 1;
        }
        if (depth !== 0) throw new Error(`${where}: unbalanced parentheses`);
        return { kind: 'pipe', pipe: parsePipeline(tokens.slice(start, index - 1), where, false) };
      }
      default:
        throw new Error(`${where}: unexpected "${token.t}"`);
    }
  };
  while (index < tokens.length) {
    if (tokens[index]!.t === '|') {
      index += 1;
      commands.push([]);
      continue;
    }
    commands.at(-1)!.push(parseOperand());
  }
  if (commands.some((command) => command.length === 0)) throw new Error(`${where}: empty command in pipeline`);
  return { declare, assign, commands, where };
}

interface Parsed {
  nodes: Node[];
  defines: Map<string, Node[]>;
}

function parseTemplate(source: string, file: string): Parsed {
  const items = lex(source, file);
  const defines = new Map<string, Node[]>();
  let index = 0;

  /** Nodes up to one of `stops`; returns them and the keyword action that ended them. */
  const parseList = (stops: string[]): { nodes: Node[]; stop: Item | undefined } => {
    const nodes: Node[] = [];
    while (index < items.length) {
      const item = items[index++]!;
      if (item.kind === 'text') {
        nodes.push({ type: 'text', text: item.text });
        continue;
      }
      const keyword = /^(\w+)\b/.exec(item.text)?.[1] ?? '';
      if (stops.includes(keyword)) return { nodes, stop: item };
      if (keyword === 'if' || keyword === 'with' || keyword === 'range') {
        nodes.push(parseBlock(keyword, item.text.slice(keyword.length), item.where));
      } else if (keyword === 'define') {
        const name = /^define\s+"([^"]+)"$/.exec(item.text)?.[1];
        if (!name) throw new Error(`${item.where}: define needs a quoted name`);
        const body = parseList(['end']);
        if (body.stop === undefined) throw new Error(`${item.where}: define "${name}" has no end`);
        defines.set(name, body.nodes);
      } else if (['end', 'else', 'template', 'block', 'break', 'continue'].includes(keyword)) {
        throw new Error(`${item.where}: unexpected or unsupported "${keyword}"`);
      } else {
        nodes.push({ type: 'output', pipe: parsePipeline(tokenize(item.text, item.where), item.where, true) });
      }
    }
    return { nodes, stop: undefined };
  };

  const parseBlock = (type: 'if' | 'with' | 'range', rest: string, where: string): Node => {
    const pipe = parsePipeline(tokenize(rest, where), where, true);
    const then = parseList(['else', 'end']);
    if (then.stop === undefined) throw new Error(`${where}: ${type} has no end`);
    let otherwise: Node[] = [];
    if (then.stop.text.startsWith('else')) {
      const elseRest = then.stop.text.slice('else'.length).trim();
      if (elseRest.startsWith('if ') && type === 'if') {
        // `else if` is an if inside the else branch that shares this block's end.
        otherwise = [parseBlock('if', elseRest.slice(2), then.stop.where)];
        return { type, pipe, then: then.nodes, otherwise };
      }
      if (elseRest !== '') throw new Error(`${then.stop.where}: unsupported "${then.stop.text}"`);
      const rest2 = parseList(['end']);
      if (rest2.stop === undefined) throw new Error(`${where}: ${type} has no end`);
      otherwise = rest2.nodes;
    }
    return { type, pipe, then: then.nodes, otherwise };
  };

  const top = parseList([]);
  return { nodes: top.nodes, defines };
}

/* ----------------------------------------------------------------------------------------------
 * Execution.
 * -------------------------------------------------------------------------------------------- */

/** Helm's built-in objects (.Release, .Chart, …) are Go structs: an unknown field is an error, not nil. */
class Struct {
  constructor(
    readonly label: string,
    readonly fields: Record<string, unknown>,
  ) {}
}

class Scope {
  private readonly vars = new Map<string, unknown>();
  constructor(private readonly parent?: Scope) {}
  child(): Scope {
    return new Scope(this);
  }
  declare(name: string, value: unknown): void {
    this.vars.set(name, value);
  }
  assign(name: string, value: unknown, where: string): void {
    if (this.vars.has(name)) this.vars.set(name, value);
    else if (this.parent) this.parent.assign(name, value, where);
    else throw new Error(`${where}: undefined variable ${name}`);
  }
  get(name: string, where: string): unknown {
    if (this.vars.has(name)) return this.vars.get(name);
    if (this.parent) return this.parent.get(name, where);
    throw new Error(`${where}: undefined variable ${name}`);
  }
}

interface State {
  dot: unknown;
  scope: Scope;
  depth: number;
}

type Func = (args: unknown[], state: State, where: string) => unknown;

class Renderer {
  private readonly templates = new Map<string, Node[]>();
  /** Which object in the values tree sits at which path, so lookups on it can be recorded. */
  readonly valuesPaths = new WeakMap<object, string>();
  readonly valuesRead = new Set<string>();

  addFile(name: string, source: string): void {
    const parsed = parseTemplate(source, name);
    // Helm makes every file a template of its own name, which is what `include (print $.Template.BasePath …)` finds.
    this.templates.set(name, parsed.nodes);
    for (const [defined, nodes] of parsed.defines) this.templates.set(defined, nodes);
  }

  execute(name: string, dot: unknown, depth = 0): string {
    const nodes = this.templates.get(name);
    if (!nodes) throw new Error(`no template named "${name}"`);
    if (depth > 50) throw new Error(`template "${name}" includes itself too deeply`);
    const scope = new Scope();
    scope.declare('$', dot);
    return this.run(nodes, { dot, scope, depth });
  }

  private run(nodes: Node[], state: State): string {
    let out = '';
    for (const node of nodes) {
      if (node.type === 'text') {
        out += node.text;
      } else if (node.type === 'output') {
        const value = this.pipeline(node.pipe, state);
        if (node.pipe.declare.length === 0) out += printed(value, node.pipe.where);
      } else {
        const scope = state.scope.child();
        const inner = { ...state, scope };
        if (node.type === 'range') {
          out += this.range(node, inner);
          continue;
        }
        const value = this.pipeline(node.pipe, inner);
        if (truth(value)) out += this.run(node.then, node.type === 'with' ? { ...inner, dot: value, scope: scope.child() } : { ...inner, scope: scope.child() });
        else out += this.run(node.otherwise, { ...inner, scope: scope.child() });
      }
    }
    return out;
  }

  private range(node: Block, state: State): string {
    const declare = node.pipe.declare;
    const collection = this.pipeline({ ...node.pipe, declare: [] }, state);
    let entries: [unknown, unknown][];
    if (Array.isArray(collection)) entries = collection.map((value, i) => [BigInt(i), value]);
    else if (isMap(collection)) entries = Object.keys(collection).sort().map((key) => [key, collection[key]]);
    else if (collection === null || collection === undefined) entries = [];
    else throw new Error(`${node.pipe.where}: range can't iterate over ${typeof collection}`);
    if (entries.length === 0) return this.run(node.otherwise, { ...state, scope: state.scope.child() });
    let out = '';
    for (const [key, value] of entries) {
      const scope = state.scope.child();
      if (declare.length === 1) scope.declare(declare[0]!, value);
      if (declare.length === 2) {
        scope.declare(declare[0]!, key);
        scope.declare(declare[1]!, value);
      }
      out += this.run(node.then, { ...state, dot: value, scope });
    }
    return out;
  }

  private pipeline(pipe: Pipeline, state: State): unknown {
    let value: unknown;
    let piped = false;
    for (const command of pipe.commands) {
      value = this.command(command, state, pipe.where, piped ? [value] : []);
      piped = true;
    }
    if (pipe.declare.length > 1) throw new Error(`${pipe.where}: two variables only in range`);
    if (pipe.declare.length === 1) {
      if (pipe.assign) state.scope.assign(pipe.declare[0]!, value, pipe.where);
      else state.scope.declare(pipe.declare[0]!, value);
    }
    return value;
  }

  private command(command: Operand[], state: State, where: string, piped: unknown[]): unknown {
    const [head, ...rest] = command;
    if (head!.kind === 'func') {
      const lazy = head!.name === 'and' || head!.name === 'or';
      if (lazy) return this.logic(head!.name, [...rest.map((operand) => () => this.operand(operand, state, where)), ...piped.map((value) => () => value)]);
      const func = this.funcs[head!.name];
      if (!func) throw new Error(`${where}: function "${head!.name}" not defined (or not supported by this renderer)`);
      return func([...rest.map((operand) => this.operand(operand, state, where)), ...piped], state, where);
    }
    if (rest.length > 0 || piped.length > 0) throw new Error(`${where}: can't give an argument to a non-function`);
    return this.operand(head!, state, where);
  }

  private operand(operand: Operand, state: State, where: string): unknown {
    switch (operand.kind) {
      case 'const':
        return operand.value;
      case 'field':
        return this.walk(state.dot, operand.path, where);
      case 'var':
        return this.walk(state.scope.get(operand.name, where), operand.path, where);
      case 'pipe':
        return this.pipeline(operand.pipe, state);
      case 'func': {
        // A function named as an argument is called with no arguments, as Go does.
        const func = this.funcs[operand.name];
        if (!func) throw new Error(`${where}: function "${operand.name}" not defined`);
        return func([], state, where);
      }
    }
  }

  private walk(base: unknown, path: string[], where: string): unknown {
    let value = base;
    for (const key of path) value = this.lookup(value, key, where);
    return value;
  }

  private lookup(base: unknown, key: string, where: string): unknown {
    if (base === null || base === undefined) throw new Error(`${where}: nil pointer evaluating interface {}.${key}`);
    if (base instanceof Struct) {
      if (!(key in base.fields)) throw new Error(`${where}: can't evaluate field ${key} in type ${base.label}`);
      return base.fields[key];
    }
    if (!isMap(base)) throw new Error(`${where}: can't evaluate field ${key} in type ${Array.isArray(base) ? 'list' : typeof base}`);
    const value = Object.hasOwn(base, key) ? base[key] : undefined;
    this.recordRead(base, key, value);
    return value;
  }

  private recordRead(base: object, key: string, value: unknown): void {
    const path = this.valuesPaths.get(base);
    if (path === undefined) return;
    const here = path === '' ? key : `${path}.${key}`;
    this.valuesRead.add(here);
    if (isMap(value)) this.valuesPaths.set(value, here);
  }

  private logic(name: string, args: (() => unknown)[]): unknown {
    let value: unknown;
    for (const arg of args) {
      value = arg();
      if (name === 'and' && !truth(value)) return value;
      if (name === 'or' && truth(value)) return value;
    }
    return value;
  }

  private readonly funcs: Record<string, Func> = {
    include: ([name, dot], state) => this.execute(String(name), dot, state.depth + 1),
    required: ([message, value]) => {
      if (value === null || value === undefined || value === '') throw new TemplateFailure(String(message));
      return value;
    },
    fail: ([message]) => {
      throw new TemplateFailure(String(message));
    },
    default: ([fallback, ...given]) => (given.length === 0 || empty(given[0]) ? fallback : given[0]),
    empty: ([value]) => empty(value),
    not: ([value]) => !truth(value),
    eq: ([first, ...others], _state, where) => others.some((other) => compare(first, other, where) === 0),
    ne: ([a, b], _state, where) => compare(a, b, where) !== 0,
    lt: ([a, b], _state, where) => compare(a, b, where) < 0,
    le: ([a, b], _state, where) => compare(a, b, where) <= 0,
    gt: ([a, b], _state, where) => compare(a, b, where) > 0,
    ge: ([a, b], _state, where) => compare(a, b, where) >= 0,
    int: ([value]) => toInt(value),
    toString: (args: unknown[]) => strval(args[0]),
    quote: (values) => values.filter((value) => value !== null && value !== undefined).map((value) => goQuote(strval(value))).join(' '),
    print: (values) => goPrint(values),
    printf: ([format, ...args], _state, where) => printf(String(format), args, where),
    toYaml: ([value]) => toYaml(value),
    indent: ([width, text]) => indent(Number(width), String(text)),
    nindent: ([width, text]) => `\n${indent(Number(width), String(text))}`,
    trunc: ([count, text]) => trunc(Number(count), String(text)),
    trimSuffix: ([suffix, text]) => (String(text).endsWith(String(suffix)) ? String(text).slice(0, String(text).length - String(suffix).length) : String(text)),
    replace: ([from, to, text]) => String(text).split(String(from)).join(String(to)),
    contains: ([part, text]) => String(text).includes(String(part)),
    lower: ([text]) => String(text).toLowerCase(),
    hasKey: ([map, key]) => isMap(map) && Object.hasOwn(map, String(key)),
    index: ([collection, ...keys], _state, where) =>
      keys.reduce<unknown>((value, key) => {
        if (value === null || value === undefined) throw new Error(`${where}: index of untyped nil`);
        if (Array.isArray(value)) return value[Number(key)];
        if (!isMap(value)) throw new Error(`${where}: can't index item of type ${typeof value}`);
        const found = Object.hasOwn(value, String(key)) ? value[String(key)] : undefined;
        this.recordRead(value, String(key), found);
        return found;
      }, collection),
    sha256sum: ([text]) => createHash('sha256').update(String(text)).digest('hex'),
    b64enc: ([text]) => Buffer.from(String(text), 'utf8').toString('base64'),
  };
}

/* ----------------------------------------------------------------------------------------------
 * Go and sprig value semantics.
 * -------------------------------------------------------------------------------------------- */

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Struct);
}

/** Go's truth: false, 0, nil and empty strings, lists and maps are false. */
function truth(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (isMap(value)) return Object.keys(value).length > 0;
  return true;
}

const empty = (value: unknown): boolean => !truth(value);

function kind(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'number') return 'float64';
  if (typeof value === 'bigint') return 'int';
  if (Array.isArray(value)) return 'list';
  if (isMap(value)) return 'map';
  return typeof value;
}

/** Go's comparison of basic values: both of one kind, or "incompatible types for comparison". */
function compare(a: unknown, b: unknown, where: string): number {
  const kinds = [kind(a), kind(b)];
  if (kinds[0] !== kinds[1] || !['float64', 'int', 'string', 'boolean'].includes(kinds[0]!)) {
    throw new Error(`${where}: incompatible types for comparison (${kinds[0]} and ${kinds[1]})`);
  }
  if (a === b) return 0;
  return (a as number) < (b as number) ? -1 : 1;
}

function toInt(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(Math.trunc(value));
  if (typeof value === 'boolean') return value ? 1n : 0n;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return BigInt(value.trim());
  return 0n;
}

/** How Go prints a float64 with %v: shortest digits, exponent form from 1e+06 and below 1e-04. */
function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return '0';
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  return String(value);
}

/** fmt's %v of a basic value; maps and lists are not printed by this chart. */
function strval(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return goFloat(value);
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return '<nil>';
  throw new Error(`cannot turn a ${kind(value)} into a string; use toYaml`);
}

function printed(value: unknown, where: string): string {
  // Helm replaces Go's "<no value>" with nothing.
  if (value === null || value === undefined) return '';
  if (typeof value === 'object' && !(value instanceof Struct)) throw new Error(`${where}: prints a ${kind(value)}; use toYaml`);
  if (value instanceof Struct) throw new Error(`${where}: prints ${value.label}`);
  return strval(value);
}

/** fmt.Sprint: a space between operands when neither is a string. */
function goPrint(values: unknown[]): string {
  let out = '';
  values.forEach((value, i) => {
    if (i > 0 && typeof value !== 'string' && typeof values[i - 1] !== 'string') out += ' ';
    out += strval(value);
  });
  return out;
}

function goQuote(text: string): string {
  return JSON.stringify(text);
}

function printf(format: string, args: unknown[], where: string): string {
  let next = 0;
  const out = format.replace(/%([%sdvq])/g, (_whole, verb: string) => {
    if (verb === '%') return '%';
    if (next >= args.length) throw new Error(`${where}: printf "${format}" has too few arguments`);
    const arg = args[next++];
    const k = kind(arg);
    if (verb === 'v') return strval(arg);
    if (verb === 's' && k === 'string') return arg as string;
    if (verb === 'q' && k === 'string') return goQuote(arg as string);
    if (verb === 'd' && k === 'int') return String(arg);
    throw new Error(`${where}: printf %${verb} of a ${k} (Helm would print %!${verb}(${k}=…)); convert it first`);
  });
  if (next !== args.length) throw new Error(`${where}: printf "${format}" has too many arguments`);
  return out;
}

/** Helm's toYaml: keys sorted, as Go's YAML writer sorts them, without the final newline. */
function toYaml(value: unknown): string {
  if (value === undefined) return 'null';
  return stringify(value, { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, '');
}

function indent(width: number, text: string): string {
  const pad = ' '.repeat(width);
  return pad + text.split('\n').join(`\n${pad}`);
}

function trunc(count: number, text: string): string {
  if (count < 0 && text.length + count > 0) return text.slice(text.length + count);
  if (count >= 0 && text.length > count) return text.slice(0, count);
  return text;
}
