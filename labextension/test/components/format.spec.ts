/**
 * The pure formatters of the lab extension (no browser needed).
 */
import {
  describeSource,
  formatBytes,
  formatCores,
  formatUsage,
  imageIdBeside,
  percentOf,
  usageLevel
} from '../../src/components/format';

describe('format', () => {
  it('formatBytes uses binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(1288490188)).toBe('1.2 GiB');
    expect(formatBytes(4 * 1024 ** 3)).toBe('4.0 GiB');
    expect(formatBytes(80 * 1024 ** 3)).toBe('80 GiB');
    expect(formatBytes(1024 ** 3 - 1)).toBe('1.0 GiB');
    expect(formatBytes(-1)).toBe('—');
    expect(formatBytes(Number.NaN)).toBe('—');
  });

  it('formatUsage reads "used of total"', () => {
    expect(formatUsage(1288490188, 4 * 1024 ** 3)).toBe('1.2 GiB of 4.0 GiB');
  });

  it('percentOf is clamped and safe', () => {
    expect(percentOf(1, 4)).toBe(25);
    expect(percentOf(5, 4)).toBe(100);
    expect(percentOf(1, 0)).toBe(0);
  });

  it('usageLevel turns warn at 80 % and critical at 95 %', () => {
    expect(usageLevel(79.9)).toBe('ok');
    expect(usageLevel(80)).toBe('warn');
    expect(usageLevel(95)).toBe('critical');
  });

  it('describeSource says where the limit comes from', () => {
    expect(describeSource('cgroup2', true)).toBe('cgroup v2 limit');
    expect(describeSource('cgroup1', true)).toBe('cgroup v1 limit');
    expect(describeSource('host', false)).toBe(
      'no container limit — machine total'
    );
    expect(describeSource('cgroup2', false)).toBe(
      'no container limit — machine total'
    );
  });

  it('formatCores drops trailing zeros', () => {
    expect(formatCores(2)).toBe('2');
    expect(formatCores(0.314)).toBe('0.31');
  });

  it('imageIdBeside keeps what tells images of one environment apart', () => {
    // A cut at 12 characters showed only the name: 'demo-python-'.
    expect(imageIdBeside('demo-python-3f2a9c1b0d4e-zstd', 'demo-python')).toBe(
      '3f2a9c1b0d4e-zstd'
    );
    expect(imageIdBeside('other-3f2a9c1b0d4e-sif', 'demo')).toBe(
      'other-3f2a9c1b0d4e-sif'
    );
  });
});
