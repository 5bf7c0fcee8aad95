-- Couriers are providers registered in code (src/couriers/providers.ts), so
-- the list of slugs lives there, not in a CHECK constraint that every new
-- courier would have to migrate. The slug is validated at the boundary: the
-- operator API's schema enum is the registry's list, and putIntegration()
-- refuses a slug the registry does not know.
ALTER TABLE courier_integrations DROP CONSTRAINT IF EXISTS courier_integrations_slug_check;
