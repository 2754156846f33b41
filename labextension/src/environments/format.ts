/**
 * Pure helpers of the Environments and Images sections (no DOM, no
 * JupyterLab), tested on their own in test/environments/format.spec.ts.
 */
import { formatBytes } from '../components/format';
import { IEnvironment, IImage } from '../api/types';

/** The longest environment name the server accepts (envs/syntax.py). */
export const MAX_ENV_NAME_LENGTH = 64;

const ALLOWED_CHAR = /^[A-Za-z0-9._-]$/;

/**
 * Why `name` is not a valid name for a new environment, or null when it is.
 *
 * Mirrors the server's `env_name_problem` (jupyter_gpu_env/envs/syntax.py),
 * plus a check against the names already listed. The server stays the
 * judge: its 400 or 409 message is shown when it disagrees.
 */
export function envNameProblem(
  name: string,
  taken: readonly string[] = []
): string | null {
  if (name.length === 0) {
    return 'The name must not be empty.';
  }
  if (name.length > MAX_ENV_NAME_LENGTH) {
    return (
      `The name is ${name.length} characters long; at most ` +
      `${MAX_ENV_NAME_LENGTH} are allowed.`
    );
  }
  if ([...name].some(c => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)) {
    return 'The name must not contain control characters.';
  }
  if (/\s/.test(name)) {
    return 'The name must not contain spaces or other whitespace.';
  }
  if (name.includes('/') || name.includes('\\')) {
    return "The name must be a plain folder name, without '/' or '\\'.";
  }
  if (name.includes('..')) {
    return "The name must not contain '..'.";
  }
  if (name[0] === '.' || name[0] === '-') {
    return "The name must not start with '.' or '-'.";
  }
  const bad = [...new Set([...name].filter(c => !ALLOWED_CHAR.test(c)))];
  if (bad.length > 0) {
    const list = bad
      .sort()
      .map(c => `'${c}'`)
      .join(' ');
    return (
      "The name may only contain letters, digits, '.', '_' and '-' " +
      `(not ${list}).`
    );
  }
  if (taken.includes(name)) {
    return `An environment named '${name}' already exists.`;
  }
  return null;
}

/** A free name for a clone of `source`: `source-copy`, `source-copy-2`… */
export function suggestCloneName(
  source: string,
  taken: readonly string[]
): string {
  const base = source.split('@')[0].replace(/^[.-]+/, '') || 'env';
  const stem = `${base.slice(0, MAX_ENV_NAME_LENGTH - 8)}-copy`;
  let candidate = stem;
  for (let i = 2; taken.includes(candidate); i++) {
    candidate = `${stem}-${i}`;
  }
  return candidate;
}

/** The files an environment can be made from, by how their names end. */
export const ENV_FILE_SUFFIXES: readonly string[] = [
  '.yml',
  '.yaml',
  '.txt',
  '.lock'
];

/** Files with those endings that are something else: a pipeline. */
const NOT_ENV_FILES: readonly string[] = ['.pipeline.yaml', '.pipeline.yml'];

/** Whether `path` names a file an environment can be made from. */
export function isEnvironmentFile(path: string): boolean {
  const lower = path.toLowerCase();
  return (
    ENV_FILE_SUFFIXES.some(suffix => lower.endsWith(suffix)) &&
    !NOT_ENV_FILES.some(suffix => lower.endsWith(suffix))
  );
}

/**
 * `text` as a valid environment name: characters outside letters, digits,
 * '.', '_' and '-' become '-', runs of them (and '..') one, no leading '.'
 * or '-', at most 64 characters; '' when nothing is left.
 */
export function sanitizeEnvName(text: string): string {
  return text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, MAX_ENV_NAME_LENGTH)
    .replace(/[.-]+$/, '');
}

/**
 * A free name for an environment made from the file at `path` (as the file
 * browser shows it): its folder's name (`ml/project/environment.yml` →
 * `project`), or at the root the file's stem (`requirements.txt` →
 * `requirements`); `-2`, `-3`… when taken.
 */
export function suggestFileEnvName(
  path: string,
  taken: readonly string[]
): string {
  const parts = path.split('/').filter(Boolean);
  const file = parts.pop() ?? '';
  const folder = parts.pop();
  const stem = file.includes('.') ? file.slice(0, file.lastIndexOf('.')) : file;
  const base =
    sanitizeEnvName(folder ?? stem) || sanitizeEnvName(stem) || 'env';
  let candidate = base;
  for (let i = 2; taken.includes(candidate); i++) {
    const suffix = `-${i}`;
    candidate = `${base.slice(0, MAX_ENV_NAME_LENGTH - suffix.length)}${suffix}`;
  }
  return candidate;
}

/** The longest description of a shared environment the server accepts. */
export const MAX_DESCRIPTION_LENGTH = 300;

/** Why `text` is not a valid description of a shared environment, or null. */
export function descriptionProblem(text: string): string | null {
  if (text.trim().length === 0) {
    return 'Say in one line what it is for.';
  }
  if ([...text].some(c => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)) {
    return 'The description must be one line, without control characters.';
  }
  if (text.length > MAX_DESCRIPTION_LENGTH) {
    return (
      `The description is ${text.length} characters long; at most ` +
      `${MAX_DESCRIPTION_LENGTH} are allowed.`
    );
  }
  return null;
}

const SPEC_OPERATOR = /^(==|>=|<=|!=|~=|=|<|>)/;

/**
 * Split what a user typed into conda match specs: commas and spaces
 * separate specs, but a version constraint written after a space stays
 * with its package (`numpy >=1.26, scipy` is `["numpy >=1.26", "scipy"]`).
 */
/**
 * PyPI requirements typed in one field: `requests >=2.31,<3 tabulate` is
 * `["requests>=2.31,<3", "tabulate"]` (a version clause joins the name before
 * it, and the clauses of one requirement are joined by commas).
 */
export function parseRequirements(text: string): string[] {
  const out: string[] = [];
  let clauses = false; // whether the last requirement has a version clause
  for (const token of text.split(/[\s,]+/)) {
    if (!token) {
      continue;
    }
    if (SPEC_OPERATOR.test(token) && out.length > 0) {
      out[out.length - 1] += (clauses ? ',' : '') + token;
      clauses = true;
    } else {
      out.push(token);
      clauses = /[=<>!~]/.test(token);
    }
  }
  return out;
}

export function parseSpecs(text: string): string[] {
  const specs: string[] = [];
  for (const token of text.split(/[\s,]+/)) {
    if (!token) {
      continue;
    }
    if (SPEC_OPERATOR.test(token) && specs.length > 0) {
      specs[specs.length - 1] += ` ${token}`;
    } else {
      specs.push(token);
    }
  }
  return specs;
}

/** 9476 as "9,476". */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString('en-US');
}

/** "3 packages", "1 package". */
export function plural(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * An environment's size; for a clone (files hard-linked from the package
 * cache) what it really added: "138 MiB (3.5 MiB new)".
 */
export function formatEnvSize(env: IEnvironment): string {
  const { size_bytes: size, shared_bytes: shared } = env;
  if (env.size_state === 'measuring' || size === null || size === undefined) {
    return 'measuring size…';
  }
  const total = formatBytes(size);
  if (env.kind !== 'own' || !shared || shared <= 0) {
    return total;
  }
  const fresh = Math.max(0, size - shared);
  return `${total} (${formatBytes(fresh)} new)`;
}

/** "Python 3.11.7 · 31 packages · 138 MiB (3.5 MiB new)". */
export function describeEnvironment(env: IEnvironment): string {
  const parts = [
    env.python_version ? `Python ${env.python_version}` : 'no Python',
    plural(env.package_count, 'package'),
    formatEnvSize(env)
  ];
  return parts.join(' · ');
}

/** "33 MiB, 9,476 files in one". */
export function describeImageSize(image: IImage): string {
  const files = image.file_count === 1 ? 'file' : 'files';
  return (
    `${formatBytes(image.size_bytes)}, ` +
    `${formatCount(image.file_count)} ${files} in one`
  );
}

/** "squashfs · zstd", "SIF". */
export function describeImageFormat(image: IImage): string {
  if (image.format === 'sif') {
    return 'SIF';
  }
  return image.compression === 'none'
    ? 'squashfs · uncompressed'
    : `squashfs · ${image.compression}`;
}

/** How long ago a Unix time (seconds) was: "just now", "3 min ago", "2 d ago". */
export function formatAge(unixSeconds: number, nowMs = Date.now()): string {
  const seconds = Math.max(0, nowMs / 1000 - unixSeconds);
  if (seconds < 45) {
    return 'just now';
  }
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.round(minutes / 60);
  if (hours < 24) {
    return `${hours} h ago`;
  }
  const days = Math.round(hours / 24);
  return `${days} d ago`;
}

/** "0.4 s", "12 s", "2 min 5 s". */
export function formatDuration(seconds: number): string {
  if (seconds < 10) {
    return `${seconds.toFixed(1)} s`;
  }
  if (seconds < 60) {
    return `${Math.round(seconds)} s`;
  }
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds - m * 60);
  return s > 0 ? `${m} min ${s} s` : `${m} min`;
}

/**
 * Where an environment came from, for its row: `cloned from base`,
 * `created from environment.yml`, `shared from mine`.
 */
export function describeOrigin(
  env: Pick<IEnvironment, 'made_from' | 'source_name'>
): string {
  const source = env.source_name ?? '';
  switch (env.made_from) {
    case 'file':
      return `created from ${source}`;
    case 'share':
      return `shared from ${source}`;
    default:
      return `cloned from ${source}`;
  }
}

/** The text of an API error without pydantic's "Value error, " noise. */
export function cleanMessage(message: string): string {
  return message.replace(/Value error, /g, '');
}
