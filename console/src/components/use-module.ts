import { useEffect, useState } from 'preact/hooks';

/** A module loaded on first use (its own chunk of the build); undefined until it has arrived. */
export function useModule<T>(load: () => Promise<T>): T | undefined {
  const [module, setModule] = useState<T | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void load().then((m) => live && setModule(() => m));
    return () => {
      live = false;
    };
  }, [load]);
  return module;
}
