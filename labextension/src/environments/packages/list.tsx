/**
 * The package list of an expanded environment row, loaded when first shown
 * (and again when the environment changes).
 */
import React, { useEffect, useState } from 'react';

import { ApiError, asApiError } from '../../api/request';
import { IEnvironment, IPackage } from '../../api/types';
import { EnvironmentsClient } from '../client';

export function PackageList(props: {
  id: string;
  env: IEnvironment;
  client: EnvironmentsClient;
}): JSX.Element {
  const { env, client } = props;
  const [packages, setPackages] = useState<IPackage[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  // What identifies a state of the environment worth reloading for.
  const version = `${env.name}:${env.package_count}:${env.size_bytes ?? ''}`;

  useEffect(() => {
    let live = true;
    client
      .get(env.name)
      .then(detail => {
        if (live) {
          setPackages(detail.packages);
          setError(null);
        }
      })
      .catch(reason => {
        if (live) {
          setError(asApiError(reason));
        }
      });
    return () => {
      live = false;
    };
  }, [version]);

  let content: JSX.Element;
  if (error) {
    content = (
      <div className="jp-GpuEnv-error">
        Could not read the packages: {error.message}
      </div>
    );
  } else if (packages === null) {
    content = <div className="jp-GpuEnv-note">Reading packages…</div>;
  } else {
    content = (
      <table className="jp-GpuEnv-packages">
        <tbody>
          {packages.map(pkg => (
            <tr key={`${pkg.kind}:${pkg.name}`} title={titleOf(pkg)}>
              <td className="jp-GpuEnv-pkgName">{pkg.name}</td>
              <td className="jp-GpuEnv-pkgVersion">
                {pkg.version}
                {pkg.kind === 'pypi' && (
                  <span className="jp-GpuEnv-badge">pip</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  return (
    <div
      id={props.id}
      className="jp-GpuEnv-envDetail"
      data-testid="gpu-env-env-packages"
    >
      <div className="jp-GpuEnv-envPrefix jp-GpuEnv-note" title={env.prefix}>
        {env.prefix}
      </div>
      {content}
    </div>
  );
}

function titleOf(pkg: IPackage): string {
  if (pkg.kind === 'pypi') {
    return `${pkg.name} ${pkg.version}, installed with pip`;
  }
  const build = pkg.build ? ` (${pkg.build})` : '';
  const channel = pkg.channel ? ` from ${pkg.channel}` : '';
  return `${pkg.name} ${pkg.version}${build}${channel}`;
}
