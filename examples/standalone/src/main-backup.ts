/** `npm run backup -- <backup file>`: see `Backup.backup`. */
import * as Backup from "./Backup.js"

void Backup.run("backup", Backup.backup(process.argv.slice(2)))
