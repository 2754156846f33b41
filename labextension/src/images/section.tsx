/**
 * The "Images" section: environments packed into one squashfs (or SIF)
 * file each, with the command lines to use them.
 */
import {
  ToolbarButtonComponent,
  notebookIcon
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React, { useEffect, useReducer } from 'react';

import { useSignals } from '../components/hooks';
import { MenuButton } from '../components/menu-button';
import { ListingStatus } from '../components/listing';
import { SectionWidget } from '../sidebar/section-widget';
import { imageFileIcon, packIcon } from '../components/icons';
import { formatBytes } from '../components/format';
import { ListRow } from '../components/row';
import { IImage } from '../api/types';
import {
  describeImageFormat,
  describeImageSize,
  formatAge,
  formatDuration
} from '../environments/format';
import { ImagesModel } from './model';
import { ImageCommandIDs, imageMenu } from './commands';
import { ImageUsage } from './usage';

/** Ages ("3 min ago") are redrawn this often, in ms. */
const AGE_TICK = 30 * 1000;

function ImageRow(props: {
  image: IImage;
  commands: CommandRegistry;
  /** Packed while this Lab was open: its "How to use" shows open. */
  isNew: boolean;
}): JSX.Element {
  const { image, commands } = props;
  const details = [
    `from ${formatBytes(image.env_size_bytes)}`,
    `packed in ${formatDuration(image.pack_seconds)}`
  ].join(' · ');
  return (
    <ListRow
      kind="image"
      data={{
        environment: image.environment,
        id: image.id,
        size: image.size_bytes
      }}
    >
      <div className="jp-GpuEnv-rowHeader">
        <span className="jp-GpuEnv-imageTitle" title={image.path}>
          <imageFileIcon.react tag="span" className="jp-GpuEnv-icon" />
          <span className="jp-GpuEnv-rowName">{image.environment}</span>
          <span className="jp-GpuEnv-imageFormat jp-GpuEnv-note">
            {describeImageFormat(image)}
          </span>
        </span>
        <div className="jp-GpuEnv-rowActions" role="toolbar">
          <ToolbarButtonComponent
            icon={notebookIcon}
            tooltip={
              'New notebook from this image: its kernel runs from the ' +
              'mounted image (and shows in the Launcher)'
            }
            dataset={{ action: 'notebook' }}
            onClick={() =>
              void commands.execute(ImageCommandIDs.notebook, {
                image: image.id
              })
            }
          />
          <MenuButton
            commands={commands}
            label={`Actions on the image of '${image.environment}'`}
            entries={imageMenu(image.id)}
          />
        </div>
      </div>
      <div className="jp-GpuEnv-envMeta">
        <span data-testid="gpu-env-image-size">{describeImageSize(image)}</span>
        {' · '}
        <span title={new Date(image.created_at * 1000).toLocaleString()}>
          {formatAge(image.created_at)}
        </span>
      </div>
      <div className="jp-GpuEnv-note">{details}</div>
      <ImageUsage image={image} open={props.isNew} />
    </ListRow>
  );
}

export function ImagesView(props: {
  model: ImagesModel;
  commands: CommandRegistry;
}): JSX.Element {
  const { model } = props;
  useSignals([model.changed]);
  const [, tick] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    const timer = window.setInterval(tick, AGE_TICK);
    return () => window.clearInterval(timer);
  }, []);
  const { images, error } = model;
  return (
    <div className="jp-GpuEnv-sectionBody" data-testid="gpu-env-images">
      <ListingStatus what="images" error={error} pending={images === null} />
      {images?.length === 0 && (
        <div className="jp-GpuEnv-empty" data-testid="gpu-env-images-empty">
          <packIcon.react tag="span" className="jp-GpuEnv-icon" />
          <p>
            No images yet. Pack an environment (“Pack into an image…” in its
            row's menu) to turn its thousands of small files into one squashfs
            file: quick to open from shared filesystems, and usable by Apptainer
            or squashfuse in batch jobs.
          </p>
        </div>
      )}
      {images && images.length > 0 && (
        <ul className="jp-GpuEnv-list" data-testid="gpu-env-image-list">
          {images.map(image => (
            <ImageRow
              key={image.id}
              image={image}
              commands={props.commands}
              isNew={model.isNew(image.id)}
            />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The section widget; the list is refreshed whenever it is shown. */
export class ImagesSection extends SectionWidget {
  constructor(
    private readonly _model: ImagesModel,
    private readonly _commands: CommandRegistry
  ) {
    super('images', 'Images');
  }

  protected onShown(): void {
    void this._model.refresh();
  }

  protected render(): JSX.Element {
    return <ImagesView model={this._model} commands={this._commands} />;
  }
}
