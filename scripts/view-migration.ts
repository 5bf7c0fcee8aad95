// `npm run views:migration`: writes the migration for the stored views whose
// declaration changed since their last migration (src/platform/read-path/view-migrations.ts).
import { views } from '../src/views.ts';
import { outdatedViews, writeViewMigration } from '../src/platform/read-path/view-migrations.ts';

const changed = outdatedViews(views);
if (changed.length === 0) {
  console.log('the migrations hold every stored view as declared: nothing to write');
} else {
  const file = writeViewMigration(changed);
  console.log(`wrote src/platform/db/migrations/${file} (${changed.map((v) => v.name).join(', ')}): review it and commit it with the declaration`);
}
