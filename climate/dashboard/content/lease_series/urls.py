from django.urls import re_path

from climate.dashboard.content.lease_series import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^(?P<series_id>[^/]+)/$', views.DetailView.as_view(),
            name='detail'),
]
