"""Fake volume back end of Climate's cloud harness (installed by tools/cloud-harness.sh).

One pool named after volume_backend_name, of [BACKEND] fake_total_capacity_gb GB ("infinite":
the stock fake report); its free capacity is the total less the volumes Cinder placed on it.
"""
import io

from oslo_config import cfg

from cinder import context
from cinder.tests import fake_driver

OPTS = [cfg.StrOpt("fake_total_capacity_gb", default="infinite",
                   help="Size of the single pool in GB, or 'infinite'.")]


class Driver(fake_driver.FakeLoggingVolumeDriver):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.configuration.append_config_values(OPTS)
        self.backend_name = self.configuration.safe_get("volume_backend_name") or "fake"

    def _update_volume_stats(self):
        super()._update_volume_stats()
        total = self.configuration.fake_total_capacity_gb
        if total == "infinite":
            return
        _count, used = self.db.volume_data_get_for_host(context.get_admin_context(),
                                                         self.host)
        used = int(used)  # a Decimal (SQL SUM), which the report cannot serialize
        self._stats["pools"][0].update(
            total_capacity_gb=int(total), free_capacity_gb=max(0, int(total) - used),
            allocated_capacity_gb=used, provisioned_capacity_gb=used, reserved_percentage=0,
            thin_provisioning_support=False, thick_provisioning_support=True,
            max_over_subscription_ratio=1.0)

    def copy_volume_to_image(self, ctxt, volume, image_service, image_meta):
        image_service.update(ctxt, image_meta["id"], {},
                             io.BytesIO(b"fake volume %s\n" % volume.id.encode()))

    def clone_image(self, ctxt, volume, image_location, image_meta, image_service):
        # "cloned": Cinder then neither downloads the image nor inspects it with sudo qemu-img
        return None, True
