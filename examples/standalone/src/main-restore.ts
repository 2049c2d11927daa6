/** `npm run restore -- <backup file>`: see `Backup.restore`. */
import * as Backup from "./Backup.js"

void Backup.run("restore", Backup.restore(process.argv.slice(2)))
