// Starts dynalite (npm package, Apache-2.0), the open-source DynamoDB server redeye's tests run on, with the
// arguments given (for example --host 127.0.0.1 --port 4567 --createTableMs 0 --deleteTableMs 0 --updateTableMs 0).
//
// Why a launcher: dynalite 4 rethrows the 'aborted' error of a request whose client hung up mid-way (an SDK
// attempt timeout does exactly that) from inside a request handler, which ends the whole server. Such an error
// concerns one request only, so it is logged and the server keeps serving; any other uncaught error still
// ends the process.
//
// Usage: node scripts/dynalite.js DYNALITE_HOME [dynalite options]
//   DYNALITE_HOME: the folder npm installed dynalite into (it holds node_modules/dynalite)
'use strict'
const path = require('path')
const home = process.argv[2]
if (!home) {
  console.error('usage: node scripts/dynalite.js DYNALITE_HOME [dynalite options]')
  process.exit(2)
}
process.argv.splice(2, 1) // dynalite's cli.js reads its own options from argv[2...]
process.on('uncaughtException', function (err) {
  if (err && (err.code === 'ECONNRESET' || err.message === 'aborted')) {
    console.error('[redeye dynalite] a client aborted a request: ' + err.message)
    return
  }
  console.error(err)
  process.exit(1)
})
require(path.join(path.resolve(home), 'node_modules', 'dynalite', 'cli.js'))
