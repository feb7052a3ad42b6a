// libbluetooth's HCI headers, as the kernel and BlueZ define them.
// BeaconCapture imports this module `internal`, so no C type leaks out of it.
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
