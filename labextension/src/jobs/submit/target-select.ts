/**
 * Where the send dialog's job runs: the notebook's kernel first, then the
 * other kernels, the conda environments (those without ipykernel shown but
 * off) and the packed images (off where the backend cannot run them). The
 * options and the request field a choice becomes serve the new Dask
 * cluster's form too.
 */
import { h } from '../../components/form';
import type { IEnvironment, IImage } from '../../api/types';
import { imageIdBeside } from '../../components/format';

export interface IKernelChoice {
  name: string;
  displayName: string;
}

/** What a job or a cluster can run in (the dialogs' contexts have them). */
export interface ITargetChoices {
  kernels: IKernelChoice[];
  /** The kernelspec name in the notebook's metadata. */
  kernel: string | null;
  /** Null when they could not be listed. */
  environments: IEnvironment[] | null;
  images: IImage[] | null;
}

/**
 * The options, grouped as kernels, environments and images (a group only
 * where there is one). Where the notebook runs through a kernel
 * (`needsIpykernel`), environments without ipykernel are shown but off.
 */
export function targetGroups(
  choices: ITargetChoices,
  needsIpykernel: boolean
): HTMLOptGroupElement[] {
  const { kernels, kernel, environments, images } = choices;
  const groups = [
    h(
      'optgroup',
      { label: 'Kernels' },
      ...kernels.map(k => {
        const own = k.name === kernel ? ' — the notebook’s kernel' : '';
        return h(
          'option',
          { value: `kernel:${k.name}` },
          `${k.displayName}${own}`
        );
      })
    )
  ];
  if (environments?.length) {
    groups.push(
      h(
        'optgroup',
        { label: 'Conda environments' },
        ...environments.map(env => {
          const off = needsIpykernel && !env.has_ipykernel;
          const python = env.python_version
            ? ` (Python ${env.python_version})`
            : '';
          return h(
            'option',
            { value: `environment:${env.name}`, disabled: off },
            `${env.name}${python}${off ? ' — no ipykernel' : ''}`
          );
        })
      )
    );
  }
  if (images?.length) {
    groups.push(
      h(
        'optgroup',
        { label: 'Packed images' },
        // `data-image`: how offerImages finds them.
        ...images.map(image =>
          h(
            'option',
            { value: `image:${image.id}`, 'data-image': true },
            `${image.environment} · ${imageIdBeside(image.id, image.environment)} ` +
              `(${image.format})`
          )
        )
      )
    );
  }
  return groups;
}

/** The send dialog's select: the notebook's kernel chosen, even if absent. */
export function targetSelect(context: ITargetChoices): HTMLSelectElement {
  const { kernels, kernel } = context;
  const [kernelGroup, ...others] = targetGroups(context, true);
  // The kernel the notebook names stays its choice, marked, where this
  // server lacks it.
  if (kernel && !kernels.some(k => k.name === kernel)) {
    kernelGroup.prepend(
      h('option', { value: `kernel:${kernel}` }, `${kernel} (not installed)`)
    );
  }
  const node = h(
    'select',
    { class: 'jp-mod-styled', 'data-testid': 'gpu-env-submit-target' },
    kernelGroup,
    ...others
  );
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

/** A chosen option (`image:ab12…`) as the request's field (`{ image }`). */
export function targetField(value: string): {
  kernel?: string;
  environment?: string;
  image?: string;
} {
  const [kind, ...rest] = value.split(':');
  if (kind === 'kernel' || kind === 'environment' || kind === 'image') {
    return { [kind]: rest.join(':') };
  }
  return {};
}
