/**
 * The bodies of the Environments dialogs that ask what to make of an
 * environment: an image (format, compression) or a file to download.
 */
import type {
  Compression,
  ExportFormat,
  IImageRequest,
  ImageFormat
} from '../../api/types';
import { FormBody, field, h, select } from '../../components/form';
import { EnvironmentChoice } from './naming';

export interface IPackValue extends IImageRequest {
  environment: string;
}

const COMPRESSIONS: [Compression, string][] = [
  ['zstd', 'zstd — fast to pack and to read (default)'],
  ['xz', 'xz — smaller, slower; mounts on older kernels'],
  ['none', 'none — largest, fastest to read']
];

const FORMATS: [ImageFormat, string][] = [
  ['squashfs', 'squashfs — one file, mountable by Apptainer or squashfuse'],
  ['sif', 'SIF — an Apptainer container (needs apptainer on the server)']
];

/** Asks the image's format and compression (and the environment). */
export class PackForm extends FormBody<IPackValue> {
  constructor(options: { environments: string[]; environment: string }) {
    super();
    this._env = new EnvironmentChoice(this, 'Environment', {
      names: options.environments,
      selected: options.environment,
      testid: 'gpu-env-pack-environment'
    });
    this._format = select(FORMATS, 'squashfs');
    this._compression = select(COMPRESSIONS, 'zstd', {
      'data-testid': 'gpu-env-pack-compression'
    });
    this.node.append(
      field('Format', this._format),
      field(
        'Compression',
        this._compression,
        'Thousands of small files become one file: fast to open from ' +
          'shared filesystems and ready for batch jobs.'
      )
    );
  }

  getValue(): IPackValue {
    return {
      environment: this._env.value,
      format: this._format.value as ImageFormat,
      compression: this._compression.value as Compression
    };
  }

  private _env: EnvironmentChoice;
  private _format: HTMLSelectElement;
  private _compression: HTMLSelectElement;
}

/** Asks which export to download. */
export class ExportForm extends FormBody<ExportFormat> {
  constructor() {
    super();
    const choices: [ExportFormat, string, string][] = [
      [
        'yaml',
        'environment.yml',
        'Package names and versions: rebuild it with conda env create.'
      ],
      [
        'explicit',
        'Explicit lock',
        'Exact package URLs and hashes: the same environment, bit for bit.'
      ]
    ];
    for (const [value, label, hint] of choices) {
      const radio = h('input', {
        type: 'radio',
        name: 'jp-GpuEnv-exportFormat',
        value,
        checked: value === 'yaml'
      });
      this._radios.push(radio);
      this.node.append(
        h(
          'label',
          { class: 'jp-GpuEnv-choice' },
          radio,
          h(
            'span',
            {},
            h('strong', {}, label),
            h('span', { class: 'jp-GpuEnv-fieldHint' }, hint)
          )
        )
      );
    }
  }

  getValue(): ExportFormat {
    const checked = this._radios.find(r => r.checked);
    return (checked?.value ?? 'yaml') as ExportFormat;
  }

  private _radios: HTMLInputElement[] = [];
}
