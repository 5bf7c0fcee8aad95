// What this deployment is (GET /admin/api/info), read once after sign-in and
// shared by the shell and the pages: couriers, jobs, scopes, operations.
import { useQuery } from '@tanstack/react-query';
import { admin } from './api';
import { queryKeys } from './query-keys';

export function useServiceInfo() {
  return useQuery({ queryKey: queryKeys.info(), queryFn: () => admin('GET', '/admin/api/info').then((r) => r.data) });
}

/** The couriers this deployment has registered, for choosers and filters. */
export function useCourierSlugs(): string[] {
  return useServiceInfo().data?.couriers.map((c) => c.slug) ?? [];
}
