/**
 * The pure helpers of the Environments and Images sections (no browser).
 */
import {
  cleanMessage,
  describeEnvironment,
  describeOrigin,
  descriptionProblem,
  describeImageFormat,
  describeImageSize,
  envNameProblem,
  formatAge,
  formatCount,
  formatDuration,
  formatEnvSize,
  isEnvironmentFile,
  parseSpecs,
  sanitizeEnvName,
  suggestCloneName,
  suggestFileEnvName
} from '../../src/environments/format';
import type { IEnvironment, IImage } from '../../src/api/types';

const MIB = 1024 ** 2;

const CLONE: IEnvironment = {
  name: 'mine',
  prefix: '/home/u/.conda/envs/mine',
  kind: 'own',
  python_version: '3.11.7',
  package_count: 31,
  size_bytes: 145035264,
  shared_bytes: 141361152,
  size_state: 'measured',
  has_ipykernel: true,
  kernel_name: null,
  source: '/envs/demo-python',
  source_name: 'demo-python',
  made_from: 'clone',
  created_at: 1795336284,
  owner: null,
  description: null,
  can_unpublish: false
};

describe('environments format', () => {
  it('envNameProblem mirrors the server', () => {
    expect(envNameProblem('ok-name_1.2')).toBeNull();
    expect(envNameProblem('')).toBe('The name must not be empty.');
    expect(envNameProblem('x'.repeat(64))).toBeNull();
    expect(envNameProblem('x'.repeat(65))).toBe(
      'The name is 65 characters long; at most 64 are allowed.'
    );
    expect(envNameProblem('a\tb')).toMatch(/control characters/);
    expect(envNameProblem('a b')).toMatch(/spaces/);
    expect(envNameProblem('../x')).toMatch(/without '\/'/);
    expect(envNameProblem('a..b')).toMatch(/'\.\.'/);
    expect(envNameProblem('.hidden')).toMatch(/start with/);
    expect(envNameProblem('-x')).toMatch(/start with/);
    expect(envNameProblem('a@b:c')).toBe(
      "The name may only contain letters, digits, '.', '_' and '-' " +
        "(not ':' '@')."
    );
    expect(envNameProblem('taken', ['taken'])).toBe(
      "An environment named 'taken' already exists."
    );
  });

  it('suggestCloneName finds a free, valid name', () => {
    expect(suggestCloneName('demo', [])).toBe('demo-copy');
    expect(suggestCloneName('demo', ['demo-copy', 'demo-copy-2'])).toBe(
      'demo-copy-3'
    );
    expect(suggestCloneName('base@conda', [])).toBe('base-copy');
    expect(envNameProblem(suggestCloneName('x'.repeat(64), []))).toBeNull();
  });

  it('a file names the environment made from it: its folder, else its stem', () => {
    expect(suggestFileEnvName('ml/project/environment.yml', [])).toBe(
      'project'
    );
    expect(suggestFileEnvName('requirements.txt', [])).toBe('requirements');
    expect(suggestFileEnvName('My Project (v2)/env.yaml', [])).toBe(
      'My-Project-v2'
    );
    expect(suggestFileEnvName('.hidden/conda.lock', [])).toBe('hidden');
    expect(suggestFileEnvName('ml/environment.yml', ['ml', 'ml-2'])).toBe(
      'ml-3'
    );
    expect(suggestFileEnvName('((()))/x.yml', [])).toBe('x');
    expect(suggestFileEnvName('((()))/().yml', [])).toBe('env');
    const long = suggestFileEnvName(`${'a'.repeat(80)}/environment.yml`, [
      'a'.repeat(64)
    ]);
    expect(long).toBe(`${'a'.repeat(62)}-2`);
    for (const path of ['a..b/e.yml', '-x-/e.yml', 'é ü/e.yml', 'a/..e.txt']) {
      expect(envNameProblem(suggestFileEnvName(path, []))).toBeNull();
    }
    expect(sanitizeEnvName('--a  b..c--')).toBe('a-b.c');
  });

  it('environments are made from yml, yaml, txt and lock files', () => {
    for (const path of [
      'environment.yml',
      'a/env.YAML',
      'requirements.txt',
      'conda.lock'
    ]) {
      expect(isEnvironmentFile(path)).toBe(true);
    }
    for (const path of [
      'notes.md',
      'train.ipynb',
      'yml',
      'a.yml/b.py',
      'nightly.pipeline.yaml', // a pipeline, not an environment
      'a/B.Pipeline.yml'
    ]) {
      expect(isEnvironmentFile(path)).toBe(false);
    }
  });

  it('a shared environment needs a one-line description', () => {
    expect(descriptionProblem('CUDA 12 + PyTorch 2.4')).toBeNull();
    expect(descriptionProblem('  ')).toBe('Say in one line what it is for.');
    expect(descriptionProblem('two\nlines')).toContain('one line');
    expect(descriptionProblem('x'.repeat(301))).toContain('at most 300');
  });

  it('parseSpecs keeps constraints with their package', () => {
    expect(parseSpecs('')).toEqual([]);
    expect(parseSpecs('tensorboard')).toEqual(['tensorboard']);
    expect(parseSpecs(' numpy >=1.26, scipy=1.13  tensorboard,')).toEqual([
      'numpy >=1.26',
      'scipy=1.13',
      'tensorboard'
    ]);
    expect(parseSpecs('a,b c')).toEqual(['a', 'b', 'c']);
    expect(parseSpecs('pandas >=2 <3')).toEqual(['pandas >=2 <3']);
  });

  it('sizes say what a clone really added', () => {
    expect(formatEnvSize(CLONE)).toBe('138 MiB (3.5 MiB new)');
    expect(formatEnvSize({ ...CLONE, kind: 'managed' })).toBe('138 MiB');
    expect(formatEnvSize({ ...CLONE, shared_bytes: 0 })).toBe('138 MiB');
    const measuring = {
      ...CLONE,
      size_bytes: null,
      shared_bytes: null,
      size_state: 'measuring' as const
    };
    expect(formatEnvSize(measuring)).toBe('measuring size…');
    expect(describeEnvironment(measuring)).toBe(
      'Python 3.11.7 · 31 packages · measuring size…'
    );
    expect(describeEnvironment(CLONE)).toBe(
      'Python 3.11.7 · 31 packages · 138 MiB (3.5 MiB new)'
    );
    expect(
      describeEnvironment({
        ...CLONE,
        python_version: null,
        package_count: 1,
        kind: 'managed'
      })
    ).toBe('no Python · 1 package · 138 MiB');
  });

  it('images: size, files and format', () => {
    const image = {
      size_bytes: 33 * MIB,
      file_count: 9476,
      format: 'squashfs',
      compression: 'zstd'
    } as IImage;
    expect(describeImageSize(image)).toBe('33 MiB, 9,476 files in one');
    expect(describeImageFormat(image)).toBe('squashfs · zstd');
    expect(describeImageFormat({ ...image, compression: 'none' })).toBe(
      'squashfs · uncompressed'
    );
    expect(describeImageFormat({ ...image, format: 'sif' })).toBe('SIF');
    expect(formatCount(1234567)).toBe('1,234,567');
  });

  it('ages and durations read naturally', () => {
    const now = 1_800_000_000_000;
    const at = (secondsAgo: number): string =>
      formatAge(now / 1000 - secondsAgo, now);
    expect(at(5)).toBe('just now');
    expect(at(-30)).toBe('just now');
    expect(at(180)).toBe('3 min ago');
    expect(at(3 * 3600)).toBe('3 h ago');
    expect(at(2 * 86400)).toBe('2 d ago');
    expect(formatDuration(0.4)).toBe('0.4 s');
    expect(formatDuration(12.3)).toBe('12 s');
    expect(formatDuration(125)).toBe('2 min 5 s');
    expect(formatDuration(120)).toBe('2 min');
  });

  it('cleanMessage drops pydantic noise', () => {
    expect(
      cleanMessage(
        "Invalid request: name: Value error, The name must not start with '.' or '-'."
      )
    ).toBe("Invalid request: name: The name must not start with '.' or '-'.");
  });
});

describe('where an environment came from', () => {
  it('tells a creation from a file apart from a clone', () => {
    expect(describeOrigin({ made_from: 'file', source_name: 'env.yml' })).toBe(
      'created from env.yml'
    );
    expect(describeOrigin({ made_from: 'clone', source_name: 'base' })).toBe(
      'cloned from base'
    );
    expect(describeOrigin({ made_from: 'share', source_name: 'mine' })).toBe(
      'shared from mine'
    );
  });
});
