/**
 * Where the send dialog's job runs: the notebook's kernel first, then the
 * other kernels, the conda environments (those without ipykernel shown but
 * off) and the packed images (off where the backend cannot run them).
 */
import { h } from '../../components/form';
import type { IEnvironment, IImage } from '../../api/types';

/** What the job can run in (the send dialog's context has them). */
export interface ITargetChoices {
  kernels: { name: string; displayName: string }[];
  /** The kernelspec name in the notebook's metadata. */
  kernel: string | null;
  environments: IEnvironment[] | null;
  images: IImage[] | null;
}

/** Options grouped as kernels, environments and images. */
export function targetSelect(context: ITargetChoices): HTMLSelectElement {
  const { kernels, kernel, environments, images } = context;
  const node = h('select', {
    class: 'jp-mod-styled',
    'data-testid': 'gpu-env-submit-target'
  });
  const kernelGroup = h('optgroup', { label: 'Kernels' });
  const known = kernels.some(k => k.name === kernel);
  if (kernel && !known) {
    kernelGroup.append(
      h('option', { value: `kernel:${kernel}` }, `${kernel} (not installed)`)
    );
  }
  for (const k of kernels) {
    const own = k.name === kernel ? ' — the notebook’s kernel' : '';
    kernelGroup.append(
      h('option', { value: `kernel:${k.name}` }, `${k.displayName}${own}`)
    );
  }
  node.append(kernelGroup);
  if (environments?.length) {
    const group = h('optgroup', { label: 'Conda environments' });
    for (const env of environments) {
      const missing = env.has_ipykernel ? '' : ' — no ipykernel';
      group.append(
        h(
          'option',
          {
            value: `environment:${env.name}`,
            disabled: !env.has_ipykernel
          },
          `${env.name}${env.python_version ? ` (Python ${env.python_version})` : ''}${missing}`
        )
      );
    }
    node.append(group);
  }
  if (images?.length) {
    const group = h('optgroup', { label: 'Packed images' });
    for (const image of images) {
      group.append(
        h(
          'option',
          { value: `image:${image.id}`, 'data-image': true },
          `${image.environment} · ${image.id.slice(0, 12)} (${image.format})`
        )
      );
    }
    node.append(group);
  }
  node.value = kernel
    ? `kernel:${kernel}`
    : kernels.length
      ? `kernel:${kernels[0].name}`
      : '';
  node.dataset.default = node.value;
  return node;
}

/** Images run only where the backend supports them. */
export function offerImages(
  target: HTMLSelectElement,
  supported: boolean
): void {
  const options =
    target.querySelectorAll<HTMLOptionElement>('option[data-image]');
  options.forEach(option => {
    option.disabled = !supported;
    option.title = supported ? '' : 'This backend cannot run packed images';
  });
  if (!supported && target.value.startsWith('image:')) {
    target.value = target.dataset.default ?? '';
  }
}
