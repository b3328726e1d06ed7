"""climate-manager: lease service, event engine and resource plugins."""

from climate.manager import service as manager_service
from climate import rpc
from climate import service


def main():
    service.prepare()
    rpc.init()
    manager = manager_service.ManagerService()
    manager.start()
    try:
        service.wait_for_signal()
    finally:
        manager.stop()
        rpc.cleanup()
