/**
 * Where a job or a Dask cluster runs: the send dialog's and the new cluster
 * form's choice of kernel, conda environment or packed image, and the
 * request field each choice becomes.
 */
import type { IEnvironment, IImage } from '../../../src/api/types';
import { ClusterForm } from '../../../src/dask/form';
import {
  offerImages,
  targetSelect
} from '../../../src/jobs/submit/target-select';

const KERNELS = [
  { name: 'python3', displayName: 'Python 3' },
  { name: 'torch', displayName: 'PyTorch' }
];

const ENVIRONMENTS = [
  { name: 'torch', python_version: '3.11', has_ipykernel: true },
  { name: 'bare', python_version: null, has_ipykernel: false }
] as unknown as IEnvironment[];

const IMAGES = [
  { id: 'torch-0123456789ab-zstd', environment: 'torch', format: 'squashfs' }
] as unknown as IImage[];

/** Each option as `group: value = text`, with ` (off)` where disabled. */
function options(select: HTMLSelectElement): string[] {
  return Array.from(select.querySelectorAll('option')).map(option => {
    const group = (option.parentElement as HTMLOptGroupElement).label;
    const off = option.disabled ? ' (off)' : '';
    return `${group}: ${option.value} = ${option.textContent}${off}`;
  });
}

describe('the send dialog’s target', () => {
  const choices = {
    kernels: KERNELS,
    kernel: 'torch',
    environments: ENVIRONMENTS,
    images: IMAGES
  };

  it('lists the kernels, the environments (off without ipykernel), the images', () => {
    const select = targetSelect(choices);
    expect(select.dataset.testid).toBe('gpu-env-submit-target');
    expect(options(select)).toEqual([
      'Kernels: kernel:python3 = Python 3',
      'Kernels: kernel:torch = PyTorch — the notebook’s kernel',
      'Conda environments: environment:torch = torch (Python 3.11)',
      'Conda environments: environment:bare = bare — no ipykernel (off)',
      'Packed images: image:torch-0123456789ab-zstd = torch · 0123456789ab-zstd (squashfs)'
    ]);
    expect(select.value).toBe('kernel:torch');
    expect(select.dataset.default).toBe('kernel:torch');
  });

  it('offers the notebook’s kernel where it is not installed here', () => {
    const select = targetSelect({ ...choices, kernel: 'julia' });
    expect(options(select)[0]).toBe(
      'Kernels: kernel:julia = julia (not installed)'
    );
    expect(select.value).toBe('kernel:julia');
  });

  it('starts at the first kernel, or at none', () => {
    expect(targetSelect({ ...choices, kernel: null }).value).toBe(
      'kernel:python3'
    );
    expect(targetSelect({ ...choices, kernels: [], kernel: null }).value).toBe(
      ''
    );
  });

  it('turns the images off where the backend cannot run them', () => {
    const select = targetSelect(choices);
    select.value = 'image:torch-0123456789ab-zstd';
    offerImages(select, false);
    expect(select.value).toBe('kernel:torch');
    expect(options(select).pop()).toMatch(/\(off\)$/);
    offerImages(select, true);
    expect(options(select).pop()).not.toMatch(/\(off\)$/);
  });
});

describe('the new Dask cluster’s target', () => {
  const choices = {
    kernels: KERNELS,
    kernel: 'torch',
    environments: ENVIRONMENTS,
    images: IMAGES,
    backends: [],
    last: null
  };

  function target(form: ClusterForm): HTMLSelectElement {
    return form.node.querySelector(
      '[data-testid="gpu-env-dask-target"]'
    ) as HTMLSelectElement;
  }

  it('lists every environment, ipykernel or not', () => {
    const select = target(new ClusterForm(choices));
    expect(options(select)).toEqual([
      'Kernels: kernel:python3 = Python 3',
      'Kernels: kernel:torch = PyTorch — the notebook’s kernel',
      'Conda environments: environment:torch = torch (Python 3.11)',
      'Conda environments: environment:bare = bare',
      'Packed images: image:torch-0123456789ab-zstd = torch · 0123456789ab-zstd (squashfs)'
    ]);
    expect(select.value).toBe('kernel:torch');
  });

  it('starts at the first kernel where the notebook’s is not installed', () => {
    const select = target(new ClusterForm({ ...choices, kernel: 'julia' }));
    expect(options(select)).toHaveLength(5);
    expect(select.value).toBe('kernel:python3');
  });

  it('starts at the first choice where there is no kernel', () => {
    const form = new ClusterForm({ ...choices, kernels: [], kernel: null });
    expect(target(form).value).toBe('environment:torch');
  });

  it('asks for the chosen kernel, environment or image', () => {
    const form = new ClusterForm(choices);
    const select = target(form);
    const asked = (value: string) => {
      select.value = value;
      const { kernel, environment, image } = form.getValue();
      return { kernel, environment, image };
    };
    expect(asked('kernel:torch')).toEqual({
      kernel: 'torch',
      environment: undefined,
      image: undefined
    });
    expect(asked('environment:bare')).toEqual({
      kernel: undefined,
      environment: 'bare',
      image: undefined
    });
    expect(asked('image:torch-0123456789ab-zstd')).toEqual({
      kernel: undefined,
      environment: undefined,
      image: 'torch-0123456789ab-zstd'
    });
  });
});
