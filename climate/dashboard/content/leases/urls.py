from django.urls import re_path

from climate.dashboard.content.leases import views

LEASE = r'^(?P<lease_id>[^/]+)/'

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^timeline/$', views.TimelineView.as_view(), name='timeline'),
    re_path(r'^create/$', views.CreateView.as_view(), name='create'),
    re_path(LEASE + r'$', views.DetailView.as_view(), name='detail'),
    re_path(LEASE + r'update/$', views.UpdateView.as_view(), name='update'),
]
